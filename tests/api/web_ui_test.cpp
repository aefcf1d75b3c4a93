// The web UI's files as the master serves them (api/handlers/web_ui.h, api/static_files.h): the
// page and its modules with their types and caching, nothing outside the UI's folder however the
// path is spelt, and a clear answer when Debian's Chart.js is not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/static_files.h"
#include "master/master.h"
#include "net/http_client.h"
#include "tests/support/test_support.h"

namespace cairn::api {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// A master whose web.root is a folder made here, with a secret file beside the folder and a link
// inside it that points at the secret.
class WebUiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.Sub("web");
    Write(root_ + "/index.html", "<!doctype html><title>Cairn</title>");
    Write(root_ + "/app.js", "export const app = 1;");
    Write(root_ + "/style.css", "body {}");
    Write(root_ + "/views/queue.js", "export const queue = 1;");
    Write(root_ + "/notes.txt", "not part of the UI");
    Write(root_ + "/.hidden.js", "hidden");
    Write(dir_.Sub("secret.js"), kSecret);
    std::filesystem::create_symlink(dir_.Sub("secret.js"), root_ + "/link.js");
  }

  void StartMaster(bool with_chart) {
    MasterConfig config;
    config.port = 0;
    config.data_dir = dir_.Sub("data");
    config.log.data_dir = config.data_dir;
    config.web.root = root_;
    config.web.chart_js = dir_.Sub("chart.min.js");
    if (with_chart) Write(config.web.chart_js, "window.Chart = function () {};");
    auto master = Master::Start(config);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(*master);
  }

  net::ClientResponse Get(const std::string& target,
                          std::map<std::string, std::string> headers = {}) {
    net::Client client("127.0.0.1", master_->port());
    auto response = client.Request("GET", target, "", headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::ClientResponse{};
  }

  static constexpr const char* kSecret = "the secret beside the UI";
  testing::TempDir dir_;
  std::string root_;
  std::unique_ptr<Master> master_;
};

TEST_F(WebUiTest, ServesThePageAndItsFilesToAnyoneWithTheirTypesAndCaching) {
  StartMaster(true);
  auto page = Get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.body, "<!doctype html><title>Cairn</title>");
  EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_NE(page.headers["content-security-policy"].find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(page.headers["x-content-type-options"], "nosniff");
  auto module = Get("/ui/views/queue.js");
  EXPECT_EQ(module.status, 200);
  EXPECT_EQ(module.body, "export const queue = 1;");
  EXPECT_EQ(module.headers["content-type"], "text/javascript; charset=utf-8");
  EXPECT_EQ(module.headers["cache-control"], "no-cache");
  EXPECT_EQ(Get("/ui/style.css").headers["content-type"], "text/css; charset=utf-8");
  // A browser that holds the current version is told so, without the body.
  const std::string tag = module.headers["etag"];
  ASSERT_FALSE(tag.empty());
  auto unchanged = Get("/ui/views/queue.js", {{"If-None-Match", tag}});
  EXPECT_EQ(unchanged.status, 304);
  EXPECT_EQ(unchanged.body, "");
  Write(root_ + "/views/queue.js", "export const queue = 2;");
  auto changed = Get("/ui/views/queue.js", {{"If-None-Match", tag}});
  EXPECT_EQ(changed.status, 200);
  EXPECT_EQ(changed.body, "export const queue = 2;");
  // The page is public; the data it shows is not.
  EXPECT_EQ(Get("/api/v1/agents").status, 401);
}

TEST_F(WebUiTest, NothingOutsideTheFolderNorOutsideWhatTheUiIsMadeOf) {
  StartMaster(true);
  for (const std::string target :
       {"/ui/../secret.js", "/ui/%2e%2e/secret.js", "/ui/..%2fsecret.js", "/ui/..%2Fsecret.js",
        "/ui/views/..%2f..%2fsecret.js", "/ui/views/%2e%2e/%2e%2e/secret.js", "/ui/link.js",
        "/ui/.hidden.js", "/ui/notes.txt", "/ui/views", "/ui/views/", "/ui/..%5csecret.js",
        "/ui/app.js%00.css", "/ui/%2fetc%2fpasswd", "/ui//etc/passwd", "/ui/./app.js",
        "/ui/%2e/app.js"}) {
    SCOPED_TRACE(target);
    auto response = Get(target);
    EXPECT_EQ(response.status, 404);
    EXPECT_EQ(response.body.find(kSecret), std::string::npos);
  }
  EXPECT_EQ(Get("/ui/app.js").status, 200);
}

TEST_F(WebUiTest, AMissingChartJsIsSaidInWords) {
  StartMaster(false);
  auto chart = Get("/ui/vendor/chart.js");
  EXPECT_EQ(chart.status, 404);
  EXPECT_NE(chart.body.find("libjs-chart.js"), std::string::npos) << chart.body;
  EXPECT_EQ(Get("/").status, 200) << "the page itself still loads and says what is missing";
}

TEST_F(WebUiTest, ChartJsIsServedFromWhereDebianPutsIt) {
  StartMaster(true);
  auto chart = Get("/ui/vendor/chart.js");
  EXPECT_EQ(chart.status, 200);
  EXPECT_EQ(chart.body, "window.Chart = function () {};");
  EXPECT_EQ(chart.headers["content-type"], "text/javascript; charset=utf-8");
  EXPECT_NE(chart.headers["cache-control"].find("max-age"), std::string::npos);
}

TEST(StaticFilesTest, ContentTypesOnlyForWhatTheUiIsMadeOf) {
  EXPECT_EQ(StaticContentType("a/b.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(StaticContentType("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(StaticContentType("logo.svg"), "image/svg+xml");
  EXPECT_EQ(StaticContentType("notes.txt"), std::nullopt);
  EXPECT_EQ(StaticContentType(".js"), std::nullopt);
  EXPECT_EQ(StaticContentType("js"), std::nullopt);
}

TEST(StaticFilesTest, AMissingFolderIsNotFoundAndSaysWhichFolder) {
  auto file = ResolveStaticFile("/nonexistent/cairn-web", "index.html");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("/nonexistent/cairn-web"), std::string::npos);
}

}  // namespace
}  // namespace cairn::api
