// Text form of the actions: one line each, as in design.md §2.
#include "remat/schedule/action.hpp"

#include "remat/error.hpp"

#include <charconv>
#include <ostream>
#include <vector>

namespace remat {
namespace {

std::vector<std::string_view> split_words(std::string_view line)
{
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        const std::size_t begin = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            ++i;
        if (i > begin)
            words.push_back(line.substr(begin, i - begin));
    }
    return words;
}

template <class Int>
Int parse_int(std::string_view word, std::string_view line)
{
    Int value{};
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc{} || end != word.data() + word.size() || value < 0)
        throw argument_error("not an action: \"" + std::string(line) + "\" (\"" + std::string(word) +
                             "\" is not a non-negative 64-bit integer)");
    return value;
}

} // namespace

std::string to_string(const action& a)
{
    return std::visit(
        overloaded{
            [](const advance& x) {
                return "advance " + std::to_string(x.from) + ' ' + std::to_string(x.to) + (x.taped ? " tape" : "");
            },
            [](const store& x) {
                return "store " + std::to_string(x.level) + ' ' + std::to_string(x.slot) + ' ' + std::to_string(x.step);
            },
            [](const restore& x) {
                return "restore " + std::to_string(x.level) + ' ' + std::to_string(x.slot) + ' ' +
                       std::to_string(x.step);
            },
            [](const free_slot& x) { return "free " + std::to_string(x.level) + ' ' + std::to_string(x.slot); },
            [](const reverse& x) { return "reverse " + std::to_string(x.step); },
        },
        a);
}

action parse_action(std::string_view line)
{
    const std::vector<std::string_view> w = split_words(line);
    auto expect_words = [&](std::size_t n) {
        if (w.size() != n)
            throw argument_error("not an action: \"" + std::string(line) + "\" (\"" + std::string(w[0]) + "\" takes " +
                                 std::to_string(n - 1) + " numbers)");
    };
    if (w.empty())
        throw argument_error("not an action: an empty line");
    if (w[0] == "advance") {
        if (w.size() == 4 && w[3] != "tape")
            throw argument_error("not an action: \"" + std::string(line) + "\" (\"" + std::string(w[3]) +
                                 "\" after advance A B: only \"tape\" may follow)");
        if (w.size() != 4)
            expect_words(3);
        const advance a{parse_int<step_t>(w[1], line), parse_int<step_t>(w[2], line), w.size() == 4};
        if (a.to <= a.from)
            throw argument_error("not an action: \"" + std::string(line) + "\" (advance needs A < B)");
        if (a.taped && a.to - a.from != 1)
            throw argument_error("not an action: \"" + std::string(line) +
                                 "\" (a taped advance runs one step: advance K K+1 tape)");
        return a;
    }
    if (w[0] == "store") {
        expect_words(4);
        return store{parse_int<level_t>(w[1], line), parse_int<slot_t>(w[2], line), parse_int<step_t>(w[3], line)};
    }
    if (w[0] == "restore") {
        expect_words(4);
        return restore{parse_int<level_t>(w[1], line), parse_int<slot_t>(w[2], line), parse_int<step_t>(w[3], line)};
    }
    if (w[0] == "free") {
        expect_words(3);
        return free_slot{parse_int<level_t>(w[1], line), parse_int<slot_t>(w[2], line)};
    }
    if (w[0] == "reverse") {
        expect_words(2);
        return reverse{parse_int<step_t>(w[1], line)};
    }
    throw argument_error("not an action: \"" + std::string(line) +
                         "\" (expected advance, store, restore, free or reverse)");
}

std::ostream& operator<<(std::ostream& os, const action& a)
{
    return os << to_string(a);
}

} // namespace remat
