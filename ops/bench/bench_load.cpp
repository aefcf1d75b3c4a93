// Mixed load on a real master: N concurrent clients (default 200), each sending its next request
// as soon as the previous one is answered, for D seconds (default 60); about 70% reads
// (GET /api/v1/tasks/{id}, GET /api/v1/master, GET /api/v1/agents, a 50-job page of
// GET /api/v1/job-queues-v2, GET /api/v1/commands) and 30%
// submissions (POST /api/v1/commands). Prints p50/p99/max and count per route, the errors (a
// transport failure or a status other than 200), the throughput and where the CPU went.
// The generator is a few threads (default 4) of asynchronous Beast clients, one connection per
// client, so that it leaves the machine's cores to the master it measures yet reads every answer
// as it arrives (with one or two threads, answers waited unread in the client's sockets while the
// master's threads and other work held the cores, and that wait counted as latency).
// Targets on 2 cores, 200 clients (TargetP99Millis): light reads p99 <= 50 ms, the unpaged list
// of 5,000 commands <= 500 ms, submissions <= 100 ms, 0 errors.
//   build/bin/bench_load [--clients N] [--seconds D] [--read-share F] [--agent-slots S]
//                        [--list-limit L] [--preload N] [--list-preloaded]
//                        [--generator-threads T] [--master PATH] [--rate R]
// --agent-slots S also starts a real cairn-agent with S slots (default 0: no agent, every
// submission stays queued). --list-limit L asks GET /api/v1/commands for a page of L commands
// (default 100, the page size of Determined's CLI tables; 0: all of them, which grows with every
// submission). --preload N submits N commands before the clients start (issue 43's mix:
// --preload 5000 --list-limit 0 --list-preloaded: the list asks for the preloading user's
// commands and the run's submissions are another user's, so it holds 5,000 throughout).
// --master runs another cairn-master binary (an older build).
// --rate R paces the clients instead (open loop): together they send R requests a second, each
// client at exponentially distributed intervals, and a request's latency counts from when it was
// due, so an answer that comes late delays the next one's clock too (no coordinated omission). A
// closed loop measures the master at saturation, where every answer made faster brings the next
// request sooner; a rate measures it at a given offered load.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "master/data_dir.h"
#include "net/http_client.h"
#include "net/session_login.h"
#include "tests/support/test_support.h"

using cairn::testing::BinaryPath;
using cairn::testing::ChildProcess;

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Options {
  int clients = 200;
  int seconds = 60;
  double read_share = 0.7;
  int agent_slots = 0;
  int list_limit = 100;
  int preload = 0;  // commands submitted before the clients start
  bool list_preloaded = false;
  int generator_threads = 4;
  std::string master_binary;  // "" = this build's cairn-master
  double rate = 0;            // requests a second from all clients together; 0: closed loop
};

// The routes the clients send, in the order the report lists them.
enum Route {
  kGetTask,
  kMasterInfo,
  kListAgents,
  kJobQueuePage,
  kListCommands,
  kSubmit,
  kRouteCount
};
const char* const kRouteNames[kRouteCount] = {"GET /api/v1/tasks/{id}", "GET /api/v1/master",
                                              "GET /api/v1/agents",     "GET job-queues-v2 (50)",
                                              "GET /api/v1/commands",   "POST /api/v1/commands"};
// The reads that render one entity or one small page.
constexpr Route kLightReads[] = {kGetTask, kMasterInfo, kListAgents, kJobQueuePage};

// Issue 43's targets on 2 cores with 200 clients: light reads 50 ms, the whole list of commands
// 500 ms, submissions 100 ms.
double TargetP99Millis(Route route) {
  switch (route) {
    case kListCommands:
      return 500;
    case kSubmit:
      return 100;
    default:
      return 50;
  }
}
constexpr const char* kSubmitBody = R"({"config":{"entrypoint":["true"]}})";

// A response body of which only the first bytes are kept (enough for a submission's command id
// or an error's message): a list of many thousand commands is read off the socket and dropped,
// so the generator spends its core on sending and timing, not on copying answers it never reads.
struct HeadOfBody {
  using value_type = std::string;
  static constexpr size_t kKept = 4096;

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(bhttp::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>&, beast::error_code& ec) { ec = {}; }
    template <class ConstBufferSequence>
    size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      ec = {};
      for (auto buffer : beast::buffers_range_ref(buffers)) {
        const size_t room = kKept - std::min(kKept, body_.size());
        body_.append(static_cast<const char*>(buffer.data()), std::min(room, buffer.size()));
      }
      return beast::buffer_bytes(buffers);
    }
    void finish(beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

struct RouteFigures {
  std::vector<double> millis;  // answered requests, successful or not
  size_t errors = 0;
  std::string first_error;
};

// What the clients of one generator thread share; that thread runs them all, so nothing here
// needs a lock.
struct Shared {
  std::string token;
  std::string submit_token;  // the run's submissions: another user's with --list-preloaded
  std::string list_target = "/api/v1/commands";
  double read_share = 0.7;
  double mean_interval_seconds = 0;   // each client's, with --rate; 0: closed loop
  std::vector<std::string> task_ids;  // submitted so far: what GET /api/v1/tasks/{id} asks for
  RouteFigures figures[kRouteCount];
  std::mt19937_64 random;
  bool stopping = false;
  int running = 0;  // clients not yet finished

  void Fail(Route route, const std::string& why) {
    RouteFigures& figures = this->figures[route];
    if (figures.errors++ == 0) figures.first_error = why;
  }
};

// The id in a submission's answer ({"command":{"id":"..."...}), without parsing all of it.
std::optional<std::string> CommandId(const std::string& body) {
  static const std::string kKey = "\"id\":\"";
  size_t start = body.find(kKey);
  if (start == std::string::npos) return std::nullopt;
  start += kKey.size();
  size_t end = body.find('"', start);
  if (end == std::string::npos) return std::nullopt;
  return body.substr(start, end - start);
}

class LoadClient : public std::enable_shared_from_this<LoadClient> {
 public:
  LoadClient(asio::io_context& io, tcp::endpoint endpoint, Shared& shared)
      : socket_(io), timer_(io), endpoint_(endpoint), shared_(shared) {}

  void Start() {
    ++shared_.running;
    due_ = Clock::now();
    Connect();
  }

 private:
  void Connect() {
    beast::error_code ignored;
    socket_.close(ignored);
    socket_.async_connect(endpoint_, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Finish("connect: " + ec.message());
      beast::error_code ignored;
      self->socket_.set_option(tcp::no_delay(true), ignored);
      self->SendNext();
    });
  }

  Route PickRoute() {
    std::uniform_real_distribution<double> unit(0, 1);
    if (unit(shared_.random) >= shared_.read_share || shared_.task_ids.empty()) return kSubmit;
    return static_cast<Route>(std::uniform_int_distribution<int>(0, kSubmit - 1)(shared_.random));
  }

  // Closed loop: now. Paced: at the next due time, or now when that has passed.
  void SendNext() {
    if (shared_.stopping) return Finish("");
    if (shared_.mean_interval_seconds <= 0) {
      due_ = Clock::now();
      return Send();
    }
    std::exponential_distribution<double> gap(1.0 / shared_.mean_interval_seconds);
    due_ += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(gap(shared_.random)));
    if (due_ <= Clock::now()) return Send();
    timer_.expires_at(due_);
    timer_.async_wait([self = shared_from_this()](beast::error_code) {
      if (self->shared_.stopping) return self->Finish("");
      self->Send();
    });
  }

  void Send() {
    route_ = PickRoute();
    request_ = bhttp::request<bhttp::string_body>();
    request_.version(11);
    request_.set(bhttp::field::host, "127.0.0.1");
    request_.set(bhttp::field::authorization,
                 "Bearer " + (route_ == kSubmit ? shared_.submit_token : shared_.token));
    request_.keep_alive(true);
    // As Determined's CLI (python-requests) asks: big lists come back gzipped.
    request_.set(bhttp::field::accept_encoding, "gzip, deflate");
    switch (route_) {
      case kGetTask: {
        std::uniform_int_distribution<size_t> pick(0, shared_.task_ids.size() - 1);
        request_.method(bhttp::verb::get);
        request_.target("/api/v1/tasks/" + shared_.task_ids[pick(shared_.random)]);
        break;
      }
      case kMasterInfo:
        request_.method(bhttp::verb::get);
        request_.target("/api/v1/master");
        break;
      case kListAgents:
        request_.method(bhttp::verb::get);
        request_.target("/api/v1/agents");
        break;
      case kJobQueuePage:
        request_.method(bhttp::verb::get);
        request_.target("/api/v1/job-queues-v2?limit=50");
        break;
      case kListCommands:
        request_.method(bhttp::verb::get);
        request_.target(shared_.list_target);
        break;
      case kSubmit:
      case kRouteCount:
        request_.method(bhttp::verb::post);
        request_.target("/api/v1/commands");
        request_.set(bhttp::field::content_type, "application/json");
        request_.body() = kSubmitBody;
        break;
    }
    request_.prepare_payload();
    sent_ = due_;
    bhttp::async_write(socket_, request_,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return self->Retry("write: " + ec.message());
                         self->ReadResponse();
                       });
  }

  void ReadResponse() {
    // Beast reads as much as the buffer has room for (at least 512 bytes): with the room a
    // buffer keeps after its first small answer, a list of 190 KB took hundreds of reads, each a
    // turn of this thread's loop among its other clients, and that wait counted as the master's.
    // Clients read big answers in big pieces (python-requests reads 10 KB+ at a time).
    buffer_.reserve(kReadRoom);
    parser_.emplace();
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    bhttp::async_read(socket_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->Retry("read: " + ec.message());
                        self->Answered();
                      });
  }

  void Answered() {
    const double millis = std::chrono::duration<double, std::milli>(Clock::now() - sent_).count();
    auto& response = parser_->get();
    shared_.figures[route_].millis.push_back(millis);
    const int status = response.result_int();
    if (status != 200) {
      shared_.Fail(route_, std::to_string(status) + " " + response.body().substr(0, 200));
    } else if (route_ == kSubmit) {
      auto id = CommandId(response.body());
      if (id) {
        shared_.task_ids.push_back(*id);
      } else {
        shared_.Fail(route_, "no command id in " + response.body().substr(0, 200));
      }
    }
    if (!response.keep_alive()) return Connect();
    SendNext();
  }

  // A transport failure counts against the route; the client goes on with a new connection.
  void Retry(const std::string& why) {
    shared_.Fail(route_, why);
    buffer_.clear();
    if (shared_.stopping) return Finish("");
    Connect();
  }

  void Finish(const std::string& why) {
    if (!why.empty()) shared_.Fail(route_, why);
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    --shared_.running;
  }

  static constexpr size_t kReadRoom = 64 * 1024;

  tcp::socket socket_;
  asio::steady_timer timer_;
  tcp::endpoint endpoint_;
  Shared& shared_;
  Route route_ = kMasterInfo;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::string_body> request_;
  std::optional<bhttp::response_parser<HeadOfBody>> parser_;
  Clock::time_point sent_;  // when the request was due (closed loop: when it was sent)
  Clock::time_point due_;
};

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

// User plus system CPU seconds of process `pid` so far (from /proc), or -1.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long user = 0, system = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) user = std::stoull(field);
    if (i == 15) {
      system = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "bench_load: %s\n", why.c_str());
  return 1;
}

int Run(const Options& options) {
  cairn::testing::TempDir dir;
  {
    std::ofstream config(dir.Sub("master.yaml"));
    config << "port: 0\ndata_dir: " << dir.Sub("data") << "\n";
  }
  auto master = ChildProcess::Start(
      {options.master_binary.empty() ? BinaryPath("cairn-master") : options.master_binary,
       "--config", dir.Sub("master.yaml"), "--log-level", "warn"});
  if (!master.ok()) return Fail(master.status().ToString());
  auto line = (*master)->WaitForLine(
      [](const std::string& l) { return l.rfind("cairn-master listening on", 0) == 0; },
      std::chrono::seconds(60));
  if (!line.ok()) return Fail("the master did not start");
  std::string url = line->substr(line->rfind(' ') + 1);
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  std::unique_ptr<ChildProcess> agent;
  if (options.agent_slots > 0) {
    auto started = ChildProcess::Start(
        {BinaryPath("cairn-agent"), "--master", url, "--id", "bench", "--slots",
         std::to_string(options.agent_slots), "--work-root", dir.Sub("work"), "--agent-token-file",
         cairn::AgentTokenPath(dir.Sub("data")), "--log-level", "warn"});
    if (!started.ok()) return Fail(started.status().ToString());
    agent = std::move(started).value();
    if (!agent
             ->WaitForLine(
                 [](const std::string& l) { return l.find("registered") != std::string::npos; },
                 std::chrono::seconds(60))
             .ok()) {
      return Fail("the agent did not register");
    }
  }

  cairn::net::Client setup("127.0.0.1", port);
  auto token = cairn::net::LogIn(setup, "determined");
  // --list-preloaded: the run's submissions are admin's, and the list asks for determined's
  // alone (the preloaded ones), so it holds the same commands throughout.
  cairn::net::Client admin_setup("127.0.0.1", port);
  auto submit_token = options.list_preloaded ? cairn::net::LogIn(admin_setup, "admin") : token;
  if (!submit_token.ok()) return Fail("login: " + submit_token.status().ToString());
  if (!token.ok()) return Fail("login: " + token.status().ToString());
  // A few tasks to read from the first request on (and --preload more, for lists that long).
  std::vector<std::string> seeded;
  for (int i = 0; i < std::max(10, options.preload); ++i) {
    auto response = setup.Request("POST", "/api/v1/commands", kSubmitBody);
    if (!response.ok() || response->status != 200) return Fail("seeding a submission failed");
    auto id = CommandId(response->body);
    if (!id) return Fail("no command id in " + response->body);
    seeded.push_back(*id);
  }

  // One io_context per generator thread, the clients dealt out among them.
  const int threads = std::min(options.generator_threads, options.clients);
  std::vector<std::unique_ptr<Shared>> lanes;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<asio::steady_timer>> deadlines;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  for (int t = 0; t < threads; ++t) {
    auto& shared = *lanes.emplace_back(std::make_unique<Shared>());
    shared.token = *token;
    shared.submit_token = *submit_token;
    shared.read_share = options.read_share;
    if (options.rate > 0) shared.mean_interval_seconds = options.clients / options.rate;
    shared.random.seed(42 + t);
    shared.task_ids = seeded;
    if (options.list_limit > 0) {
      shared.list_target += "?limit=" + std::to_string(options.list_limit);
    }
    if (options.list_preloaded) {
      shared.list_target += (options.list_limit > 0 ? "&" : "?") + std::string("users=determined");
    }
    contexts.push_back(std::make_unique<asio::io_context>(1));
  }
  const double master_cpu_before = ProcessCpuSeconds((*master)->pid());
  const double own_cpu_before = OwnCpuSeconds();
  const auto started = Clock::now();
  for (int i = 0; i < options.clients; ++i) {
    std::make_shared<LoadClient>(*contexts[i % threads], endpoint, *lanes[i % threads])->Start();
  }
  for (int t = 0; t < threads; ++t) {
    Shared* shared = lanes[t].get();
    deadlines.push_back(
        std::make_unique<asio::steady_timer>(*contexts[t], std::chrono::seconds(options.seconds)));
    deadlines.back()->async_wait([shared](beast::error_code) { shared->stopping = true; });
  }
  std::vector<std::thread> runners;
  // Each returns once its clients finished their last request.
  for (int t = 0; t < threads; ++t) runners.emplace_back([&, t] { contexts[t]->run(); });
  for (auto& runner : runners) runner.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  const double master_cpu = ProcessCpuSeconds((*master)->pid()) - master_cpu_before;
  const double own_cpu = OwnCpuSeconds() - own_cpu_before;
  Shared shared;  // every lane's figures together
  for (const auto& lane : lanes) {
    shared.task_ids.insert(shared.task_ids.end(), lane->task_ids.begin() + 10,
                           lane->task_ids.end());
    for (int route = 0; route < kRouteCount; ++route) {
      RouteFigures& into = shared.figures[route];
      const RouteFigures& from = lane->figures[route];
      into.millis.insert(into.millis.end(), from.millis.begin(), from.millis.end());
      if (into.errors == 0) into.first_error = from.first_error;
      into.errors += from.errors;
    }
  }

  std::printf("%-24s %8s %7s %8s %8s %8s %7s %s\n", "route", "count", "errors", "p50 ms", "p99 ms",
              "max ms", "target", "p99/target");
  std::vector<double> reads;
  size_t total = 0, errors = 0;
  bool met = true;
  auto print = [&](const char* name, std::vector<double>& millis, size_t route_errors,
                   double target) {
    std::sort(millis.begin(), millis.end());
    const double p99 = Percentile(millis, 0.99);
    std::printf("%-24s %8zu %7zu %8.2f %8.2f %8.2f", name, millis.size(), route_errors,
                Percentile(millis, 0.5), p99, millis.empty() ? 0.0 : millis.back());
    if (target > 0) {
      std::printf(" %7.0f %.2f %s", target, p99 / target,
                  p99 <= target ? "(meets target)" : "(MISSES target)");
      met &= p99 <= target;
    }
    std::printf("\n");
  };
  for (int route = 0; route < kRouteCount; ++route) {
    RouteFigures& figures = shared.figures[route];
    total += figures.millis.size();
    errors += figures.errors;
    if (route != kSubmit) reads.insert(reads.end(), figures.millis.begin(), figures.millis.end());
    print(kRouteNames[route], figures.millis, figures.errors, TargetP99Millis(Route(route)));
  }
  size_t read_errors = 0;
  for (int route = 0; route < kSubmit; ++route) read_errors += shared.figures[route].errors;
  print("all reads", reads, read_errors, 0);
  std::vector<double> light;  // one task, the master, the agents, a small page: no list that grows
  size_t light_errors = 0;
  for (Route route : kLightReads) {
    light.insert(light.end(), shared.figures[route].millis.begin(),
                 shared.figures[route].millis.end());
    light_errors += shared.figures[route].errors;
  }
  print("light reads", light, light_errors, TargetP99Millis(kGetTask));
  for (int route = 0; route < kRouteCount; ++route) {
    if (shared.figures[route].errors > 0) {
      std::printf("first error of %s: %s\n", kRouteNames[route],
                  shared.figures[route].first_error.c_str());
    }
  }
  std::printf("requests: %zu in %.1f s = %.0f/s; errors: %zu%s; tasks submitted: %zu\n", total,
              elapsed, static_cast<double>(total) / elapsed, errors,
              errors == 0 ? "" : " (target 0)", shared.task_ids.size());
  std::printf("cpu: master %.1f s (%.0f%% of one core), generator %.1f s (%.0f%%)\n", master_cpu,
              100 * master_cpu / elapsed, own_cpu, 100 * own_cpu / elapsed);
  std::fflush(stdout);
  if (agent) {
    agent->Signal(SIGTERM);
    (void)agent->Wait(std::chrono::seconds(30));
  }
  (*master)->Signal(SIGTERM);
  (void)(*master)->Wait(std::chrono::seconds(30));
  return met && errors == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--clients" && has_value) {
      options.clients = std::stoi(argv[++i]);
    } else if (arg == "--seconds" && has_value) {
      options.seconds = std::stoi(argv[++i]);
    } else if (arg == "--read-share" && has_value) {
      options.read_share = std::stod(argv[++i]);
    } else if (arg == "--agent-slots" && has_value) {
      options.agent_slots = std::stoi(argv[++i]);
    } else if (arg == "--list-preloaded") {
      options.list_preloaded = true;
    } else if (arg == "--preload" && has_value) {
      options.preload = std::stoi(argv[++i]);
    } else if (arg == "--list-limit" && has_value) {
      options.list_limit = std::stoi(argv[++i]);
    } else if (arg == "--generator-threads" && has_value) {
      options.generator_threads = std::stoi(argv[++i]);
    } else if (arg == "--master" && has_value) {
      options.master_binary = argv[++i];
    } else if (arg == "--rate" && has_value) {
      options.rate = std::stod(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: bench_load [--clients N] [--seconds D] [--read-share F] "
                   "[--agent-slots S] [--list-limit L] [--preload N] [--list-preloaded] "
                   "[--generator-threads T] "
                   "[--master PATH] [--rate R]\n");
      return 2;
    }
  }
  if (options.clients < 1 || options.seconds < 1 || options.generator_threads < 1 ||
      options.read_share < 0 || options.read_share > 1 || options.rate < 0) {
    std::fprintf(stderr,
                 "bench_load: --clients, --seconds and --generator-threads must be positive, "
                 "--read-share in [0, 1], --rate not negative\n");
    return 2;
  }
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("machine: %ld cores, load average %.2f before the run\n",
              sysconf(_SC_NPROCESSORS_ONLN), load[0]);
  std::printf(
      "load: %d clients (one connection each, %s), %d s, %.0f%% reads, generator "
      "%d threads; %s; the commands list %s\n",
      options.clients,
      options.rate > 0
          ? ("paced at " + std::to_string(static_cast<int>(options.rate)) + " requests/s in all")
                .c_str()
          : "closed loop",
      options.seconds, 100 * options.read_share, options.generator_threads,
      options.agent_slots > 0
          ? ("one agent with " + std::to_string(options.agent_slots) + " slots").c_str()
          : "no agent (submissions queue)",
      options.list_limit > 0 ? ("in pages of " + std::to_string(options.list_limit)).c_str()
                             : "whole");
  return Run(options);
}
