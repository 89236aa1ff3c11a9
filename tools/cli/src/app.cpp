#include "app.hpp"

#include "calibrate_command.hpp"
#include "draw_command.hpp"
#include "inspect_command.hpp"
#include "plan_command.hpp"
#include "remat/cli/parse.hpp"
#include "tradeoff_command.hpp"

#include "remat/error.hpp"

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace remat::cli {
namespace {

// CLI11's messages may span lines; the tool promises one.
std::string one_line(std::string text)
{
    for (char& c : text)
        if (c == '\n')
            c = ' ';
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

} // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err)
{
    CLI::App app{"remat: plan, inspect and draw optimal checkpointing schedules", "remat"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "remat 0.1.0");
    add_plan_command(app, out);
    add_draw_command(app, out);
    add_inspect_command(app, out);
    add_calibrate_command(app, out);
    add_tradeoff_command(app, out, err);
    // An empty value read as the option left out: `--step-cost ""` (a script's unset variable) priced steps at
    // the default 1, `--schedule ""` planned revolve, `--chain ""` asked for --steps. Every value must say something.
    for (CLI::App* command : app.get_subcommands({}))
        for (CLI::Option* option : command->get_options())
            if (option->get_type_size() > 0)
                option->check(CLI::Validator(
                    [](const std::string& value) { return value.empty() ? "expected a value, got \"\" (empty)" : ""; },
                    ""));
    try {
        // CLI11 would only say "a subcommand is required"; name the word it did not know.
        if (argc >= 2 && argv[1][0] != '-' &&
            app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == argv[1]; }).empty())
            throw usage_error(std::string("unknown command \"") + argv[1] +
                              "\" (expected plan, draw, tradeoff, inspect or calibrate)");
        app.parse(argc, argv);
        return 0;
    } catch (const CLI::CallForHelp&) {
        out << app.help();
        return 0;
    } catch (const CLI::CallForAllHelp&) {
        out << app.help("", CLI::AppFormatMode::All);
        return 0;
    } catch (const CLI::CallForVersion& e) {
        out << e.what() << '\n';
        return 0;
    } catch (const CLI::ParseError& e) {
        // CLI11 checks a command's required options before the words it did not know: `calibrate --bogus` said
        // "--disk is required". The word given is the likelier mistake; name it first.
        const std::vector<std::string> unknown = app.remaining(true);
        const std::string why = unknown.empty() ? e.what() : CLI::ExtrasError(unknown).what();
        err << "remat: " << one_line(why) << " (try remat --help)\n";
        return 2;
    } catch (const usage_error& e) {
        err << "remat: " << one_line(e.what()) << '\n';
        return 2;
    } catch (const argument_error& e) {
        err << "remat: " << one_line(e.what()) << '\n';
        return 2;
    } catch (const capacity_error& e) {
        err << "remat: " << one_line(e.what()) << '\n';
        return 2;
    } catch (const overflow_error& e) {
        // Counts past 64 bits follow from the arguments ("use more slots or fewer steps"), as a --budget or a peak
        // of snapshot bytes past 64 bits does, which were already bad usage: one status for all of them.
        err << "remat: " << one_line(e.what()) << '\n';
        return 2;
    } catch (const std::exception& e) {
        err << "remat: " << one_line(e.what()) << '\n';
        return 1;
    }
}

} // namespace remat::cli
