// Configuration templates merged under user configurations with Determined's rules
// (shared/reference/determined.md §d).
#include "commands/templates/template_merge.h"

#include <gtest/gtest.h>

#include "base/yaml_json.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::templates {
namespace {

using nlohmann::ordered_json;

ordered_json Merge(const std::string& template_yaml, const std::string& config_yaml) {
  auto merged = ApplyTemplate(template_yaml, config_yaml);
  EXPECT_TRUE(merged.ok()) << merged.status().ToString();
  if (!merged.ok()) return nullptr;
  auto json = YamlTextToJson(*merged, "merged");
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  return json.ok() ? *json : ordered_json(nullptr);
}

TEST(TemplateMergeTest, UserScalarsWinAndTemplateScalarsFillGaps) {
  auto merged = Merge("name: from-template\nmax_restarts: 3\ndescription: shared\n",
                      "name: mine\ndescription: null\n");
  EXPECT_EQ(merged["name"], "mine");
  EXPECT_EQ(merged["max_restarts"], 3);
  // A null in the user's file means "not set", so the template's value stays.
  EXPECT_EQ(merged["description"], "shared");
}

TEST(TemplateMergeTest, MapsAreMergedKeyByKey) {
  auto merged = Merge(
      "data:\n  url: https://t\n  nested: {a: 1, b: 2}\n"
      "resources:\n  slots_per_trial: 2\n  resource_pool: gpus\n",
      "data:\n  nested: {b: 20, c: 30}\n"
      "resources:\n  slots_per_trial: 4\n");
  EXPECT_EQ(merged["data"]["url"], "https://t");
  EXPECT_EQ(merged["data"]["nested"], (ordered_json{{"b", 20}, {"c", 30}, {"a", 1}}));
  EXPECT_EQ(merged["resources"]["slots_per_trial"], 4);
  EXPECT_EQ(merged["resources"]["resource_pool"], "gpus");
}

TEST(TemplateMergeTest, ListsAreReplacedNotConcatenated) {
  auto merged =
      Merge("labels: [a, b]\nhyperparameters:\n  act: {type: categorical, vals: [x, y]}\n",
            "labels: [c]\n");
  EXPECT_EQ(merged["labels"], (ordered_json{"c"}));
  // An explicitly empty user list still replaces the template's.
  merged = Merge("labels: [a, b]\n", "labels: []\n");
  EXPECT_EQ(merged["labels"], ordered_json::array());
  // Absent in the user's file: the template's list.
  merged = Merge("labels: [a, b]\n", "name: x\n");
  EXPECT_EQ(merged["labels"], (ordered_json{"a", "b"}));
}

TEST(TemplateMergeTest, EnvironmentVariablesAreTemplateFirstThenUser) {
  auto merged = Merge("environment:\n  environment_variables: [A=1, B=1]\n  image: t\n",
                      "environment:\n  environment_variables: [B=2]\n");
  EXPECT_EQ(merged["environment"]["environment_variables"], (ordered_json{"A=1", "B=1", "B=2"}));
  EXPECT_EQ(merged["environment"]["image"], "t");
  // A per-device map on either side: per device, the template's entries then the user's, with
  // a plain list standing for every device.
  merged = Merge("environment:\n  environment_variables:\n    cuda: [NCCL=1]\n",
                 "environment:\n  environment_variables: [A=1]\n");
  EXPECT_EQ(merged["environment"]["environment_variables"]["cuda"],
            (ordered_json{"NCCL=1", "A=1"}));
  EXPECT_EQ(merged["environment"]["environment_variables"]["cpu"], (ordered_json{"A=1"}));
  EXPECT_EQ(merged["environment"]["environment_variables"]["rocm"], (ordered_json{"A=1"}));
}

TEST(TemplateMergeTest, MountsAndPoliciesUnionAndRegistryCredentialsStayWhole) {
  auto merged = Merge(
      "bind_mounts:\n"
      "  - {host_path: /t/data, container_path: /data}\n"
      "  - {host_path: /t/cache, container_path: /cache}\n"
      "log_policies:\n"
      "  - {name: A, pattern: from-template}\n"
      "  - {name: B, pattern: b}\n"
      "environment:\n"
      "  registry_auth: {username: robot, password: p, serveraddress: cluster.example}\n"
      "  environment_variables: {cuda: [T=1]}\n",
      "bind_mounts:\n"
      "  - {host_path: /mine, container_path: /data}\n"
      "log_policies:\n"
      "  - {name: A, pattern: mine}\n"
      "environment:\n"
      "  registry_auth: {username: me, password: q}\n"
      "  environment_variables: {gpu: [U=1]}\n");
  ASSERT_EQ(merged["bind_mounts"].size(), 2u);
  EXPECT_EQ(merged["bind_mounts"][0]["host_path"], "/mine");
  EXPECT_EQ(merged["bind_mounts"][1]["container_path"], "/cache");
  ASSERT_EQ(merged["log_policies"].size(), 2u);
  EXPECT_EQ(merged["log_policies"][0]["pattern"], "mine");
  EXPECT_EQ(merged["log_policies"][1]["name"], "B");
  // The user's password never goes to the template's registry.
  EXPECT_EQ(merged["environment"]["registry_auth"],
            (ordered_json{{"username", "me"}, {"password", "q"}}));
  // "gpu" is cuda's old name: the two meet.
  EXPECT_EQ(merged["environment"]["environment_variables"]["cuda"], (ordered_json{"T=1", "U=1"}));
  EXPECT_FALSE(merged["environment"]["environment_variables"].contains("gpu"));
}

TEST(TemplateMergeTest, SearchersOfDifferentNamesNeverMix) {
  auto merged = Merge(
      "searcher:\n  name: adaptive_asha\n  metric: val_loss\n  max_trials: 16\n  divisor: 3\n"
      "  max_length: {batches: 900}\n",
      "searcher:\n  name: grid\n  max_length: {batches: 100}\n");
  EXPECT_EQ(
      merged["searcher"],
      (ordered_json{{"name", "grid"}, {"max_length", {{"batches", 100}}}, {"metric", "val_loss"}}));
  // The same searcher on both sides merges like a map.
  merged = Merge("searcher:\n  name: random\n  metric: loss\n  max_trials: 5\n",
                 "searcher:\n  name: random\n  max_trials: 7\n");
  EXPECT_EQ(merged["searcher"]["max_trials"], 7);
  EXPECT_EQ(merged["searcher"]["metric"], "loss");
  // No name on the user's side: the user refines the template's searcher.
  merged = Merge("searcher:\n  name: random\n  metric: loss\n  max_trials: 5\n",
                 "searcher:\n  max_trials: 9\n");
  EXPECT_EQ(merged["searcher"]["name"], "random");
  EXPECT_EQ(merged["searcher"]["max_trials"], 9);
}

TEST(TemplateMergeTest, CheckpointStorageTypesNeverMix) {
  auto merged = Merge(
      "checkpoint_storage:\n  type: s3\n  bucket: ckpts\n  save_trial_best: 3\n"
      "  save_trial_latest: 2\n",
      "checkpoint_storage:\n  type: shared_fs\n  host_path: /mnt\n  save_trial_latest: 0\n");
  EXPECT_EQ(merged["checkpoint_storage"], (ordered_json{{"type", "shared_fs"},
                                                        {"host_path", "/mnt"},
                                                        {"save_trial_latest", 0},
                                                        {"save_trial_best", 3}}));
}

TEST(TemplateMergeTest, HyperparametersAreAtomicUnlessBothAreNestedMaps) {
  auto merged = Merge(
      "hyperparameters:\n"
      "  lr: {type: double, minval: 0.1, maxval: 0.5, count: 3}\n"
      "  optimizer:\n"
      "    momentum: 0.9\n"
      "    beta: 0.5\n"
      "  layers: 2\n",
      "hyperparameters:\n"
      "  lr: {type: log, minval: -3, maxval: -1}\n"
      "  optimizer:\n"
      "    beta: 0.7\n");
  // The user's lr replaces the template's whole: no count borrowed.
  EXPECT_EQ(merged["hyperparameters"]["lr"],
            (ordered_json{{"type", "log"}, {"minval", -3}, {"maxval", -1}}));
  EXPECT_EQ(merged["hyperparameters"]["optimizer"],
            (ordered_json{{"beta", 0.7}, {"momentum", 0.9}}));
  EXPECT_EQ(merged["hyperparameters"]["layers"], 2);
}

TEST(TemplateMergeTest, ATemplateCannotUseATemplate) {
  const std::string bad_template = "name: t\ntemplate: other\n";
  auto merged = ApplyTemplate(bad_template, "name: mine\n");
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(merged.status().message(),
            "template: line 2: template: a template cannot itself use a template");
  EXPECT_FALSE(CheckTemplate(bad_template).ok());
  EXPECT_TRUE(CheckTemplate("name: t\n").ok());
  EXPECT_FALSE(CheckTemplate("- a list\n").ok());
}

TEST(TemplateMergeTest, TheUsersTemplateKeyIsNamedAndDropped) {
  const std::string config = "template: shared\nname: mine\n";
  auto name = TemplateNameOf(config);
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, "shared");
  auto none = TemplateNameOf("name: mine\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(TemplateNameOf("template: [a]\n").ok());
  auto merged = Merge("max_restarts: 1\n", config);
  EXPECT_FALSE(merged.contains("template"));
}

TEST(TemplateMergeTest, TheMergedTextParsesAsAnExperimentConfig) {
  // Strings that look like other types ("1", "true") must survive the trip through YAML text.
  auto merged = ApplyTemplate(
      "checkpoint_storage:\n  type: shared_fs\n  host_path: /mnt/ckpt\n"
      "entrypoint: model_def:Trial\n"
      "hyperparameters:\n  act: {type: categorical, vals: ['1', 'true', relu, 2]}\n",
      "searcher:\n  name: grid\n  metric: loss\n  max_length: {batches: 10}\n"
      "hyperparameters:\n  lr: 0.01\n");
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto config = experiments::ParseExperimentConfig(*merged);
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << *merged;
  EXPECT_EQ(config->checkpoint_storage->host_path, "/mnt/ckpt");
  EXPECT_EQ(config->entrypoint, "model_def:Trial");
  ASSERT_EQ(config->hyperparameters.size(), 2u);
  EXPECT_EQ(config->hyperparameters[0].vals, (std::vector<nlohmann::json>{"1", "true", "relu", 2}));
  EXPECT_EQ(config->hyperparameters[1].val, 0.01);
}

TEST(YamlJsonTest, ScalarsFollowTheCoreSchema) {
  auto json = YamlTextToJson(
      "i: 12\nn: -3\nf: 1.5e-3\ng: .5\nb: true\nz: ~\ne:\ns: '12'\nw: hello\nbig: 1e400x\n", "");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_TRUE((*json)["i"].is_number_integer());
  EXPECT_EQ((*json)["i"], 12);
  EXPECT_EQ((*json)["n"], -3);
  EXPECT_DOUBLE_EQ((*json)["f"].get<double>(), 0.0015);
  EXPECT_DOUBLE_EQ((*json)["g"].get<double>(), 0.5);
  EXPECT_EQ((*json)["b"], true);
  EXPECT_TRUE((*json)["z"].is_null());
  EXPECT_TRUE((*json)["e"].is_null());
  EXPECT_EQ((*json)["s"], "12");
  EXPECT_EQ((*json)["w"], "hello");
  EXPECT_EQ((*json)["big"], "1e400x");
  // And back: the YAML text reads as the same JSON.
  auto again = YamlTextToJson(JsonToYamlText(*json), "");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *json);
}

// Found by fuzzing (tests/fuzz/corpus/yaml_json/regression-*): yaml-cpp wrote a string ending in
// a carriage return as a plain scalar, which reads back without it (or as null); and a string
// with many '[' plain, which LoadYaml's flow-depth pre-scan refused as nested too deep. Keys too.
TEST(TemplateMergeTest, StringsThatOnlyReadBackQuotedSurviveTheYamlText) {
  const std::string brackets(70, '[');
  const ordered_json value = {
      {"a", "\r"},   {"b", "x\r"},   {"c", "\r\r"},    {"d", "x\r\ny"}, {"e", "1e3" + brackets},
      {"f", "{{{{"}, {"x\r", "key"}, {brackets, "key"}};
  auto again = YamlTextToJson(JsonToYamlText(value), "");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, value);
}

}  // namespace
}  // namespace cairn::templates
