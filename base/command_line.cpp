#include "base/command_line.h"

#include <iostream>

namespace cairn::command_line {
namespace {

// A command's help shows its subcommands with all their options, all the way down, rather than
// their names alone: every --help answers "what can I give from here" in one page.
class Formatter : public CLI::Formatter {
 public:
  Formatter() {
    label("Usage", "usage");
    column_width(34);
  }
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode) const override {
    return CLI::Formatter::make_subcommands(app, CLI::AppFormatMode::All);
  }
};

// The command the parse reached: the program and every subcommand chosen on the way.
const CLI::App& Reached(const CLI::App& app) {
  const CLI::App* reached = &app;
  while (!reached->get_subcommands().empty()) reached = reached->get_subcommands().front();
  return *reached;
}

std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* command = &app; !command->get_subcommands().empty();) {
    command = command->get_subcommands().front();
    path += " " + command->get_name();
  }
  return path;
}

// The named subcommands of `app` (option groups are nameless subcommands in CLI11).
std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return names;
}

}  // namespace

void Configure(CLI::App& app) {
  app.formatter(std::make_shared<Formatter>());
  app.set_version_flag("--version", app.get_name() + " " + CAIRN_VERSION);
  app.fallthrough();
  // One subcommand per level (inherited): a word after a subcommand's flags is a mistake, not a
  // second subcommand.
  app.require_subcommand(0, 1);
}

CLI::Option* AddLogLevelOption(CLI::App& app, log::Level& level) {
  return app
      .add_option_function<std::string>(
          "--log-level", [&level](const std::string& name) { level = *log::ParseLevel(name); },
          "the lowest level of diagnostics written to stderr")
      ->check(CLI::IsMember(log::LevelNames()))
      ->envname("CAIRN_LOG_LEVEL")
      ->type_name("LEVEL")
      ->default_str(log::LevelNames()[static_cast<size_t>(level)]);
}

std::optional<Stop> Parse(CLI::App& app, const std::vector<std::string>& args) {
  // CLI11 takes the words last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    // help() shows the subcommand reached, under its full name.
    return Stop{Stop::Kind::kHelp, CommandPath(app), app.help()};
  } catch (const CLI::CallForVersion& version) {
    return Stop{Stop::Kind::kVersion, CommandPath(app), std::string(version.what()) + "\n"};
  } catch (const CLI::RequiredError& error) {
    // CLI11 checks what is required before what is unknown; a word it does not know is the
    // likelier mistake ("--conifg x" should not be reported as "--config is required").
    std::vector<std::string> unknown = app.remaining();
    if (unknown.empty()) return Stop{Stop::Kind::kUsageError, CommandPath(app), error.what()};
    std::string words;
    for (const auto& word : unknown) words += (words.empty() ? "" : " ") + word;
    return Stop{Stop::Kind::kUsageError, CommandPath(app), "unexpected arguments: " + words};
  } catch (const CLI::ParseError& error) {
    return Stop{Stop::Kind::kUsageError, CommandPath(app), error.what()};
  }
  std::vector<std::string> needed = SubcommandNames(Reached(app));
  if (!needed.empty()) {
    std::string names;
    for (const auto& name : needed) names += (names.empty() ? "" : ", ") + name;
    return Stop{Stop::Kind::kUsageError, CommandPath(app), "give a command: " + names};
  }
  return std::nullopt;
}

int Finish(const Stop& stop) {
  if (stop.kind == Stop::Kind::kUsageError) return UsageError(stop.command, stop.text);
  std::cout << stop.text << std::flush;
  return 0;
}

int UsageError(std::string_view command, std::string_view message) {
  std::cerr << command << ": " << message << "\nrun '" << command << " --help' for usage\n";
  return kExitUsage;
}

}  // namespace cairn::command_line
