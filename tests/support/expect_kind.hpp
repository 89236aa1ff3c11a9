// Checks that a callable throws one kind of remat error whose message names what is wrong (tests only).
//
//     remat::test::expect_kind<remat::schedule_error>("read of slot 7", [&] { level.read(7, 0, out); }, {"slot 7"});
//     remat::test::refused_naming([] { return remat::taped_uniform(0, 3, 2); }, "steps = 0"); // argument_error
#pragma once

#include "remat/error.hpp"

#include <boost/test/unit_test.hpp>

#include <initializer_list>
#include <string>

namespace remat::test {

/// Runs `f`, which must throw exactly `Kind` (not merely a remat::error), with every one of `names` in
/// its message. `where` says which case failed.
template <class Kind, class F>
void expect_kind(const std::string& where, F&& f, std::initializer_list<const char*> names)
{
    try {
        f();
    } catch (const Kind& e) {
        const std::string what = e.what();
        for (const char* name : names)
            BOOST_TEST(what.find(name) != std::string::npos, where << ": \"" << what << "\" does not name " << name);
        return;
    } catch (const error& e) {
        BOOST_ERROR(where << ": wrong kind of error: " << e.what());
        return;
    }
    BOOST_ERROR(where << ": accepted");
}

/// Bad input: `f` must throw `Kind` (remat::argument_error unless said) naming `name`, such as "steps = 0",
/// which also names the case.
template <class Kind = argument_error, class F>
void refused_naming(F&& f, const char* name)
{
    expect_kind<Kind>(name, f, {name});
}

} // namespace remat::test
