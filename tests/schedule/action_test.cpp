// Actions are value types with == and a text form that round-trips.
#define BOOST_TEST_MODULE action
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/schedule/action.hpp"

#include <sstream>
#include <vector>

using namespace remat;

BOOST_AUTO_TEST_CASE(equality_is_by_value_and_by_kind)
{
    BOOST_TEST((action{advance{0, 4}} == action{advance{0, 4}}));
    BOOST_TEST((action{advance{0, 4}} != action{advance{0, 5}}));
    BOOST_TEST((action{advance{3, 4, true}} != action{advance{3, 4}})); // a taped advance is another action
    BOOST_TEST((action{advance{3, 4, true}} == action{advance{3, 4, true}}));
    BOOST_TEST((action{store{0, 1, 4}} != action{restore{0, 1, 4}})); // same fields, different kind
    BOOST_TEST((action{store{0, 1, 4}} != action{store{1, 1, 4}}));
    BOOST_TEST((action{free_slot{0, 2}} == action{free_slot{0, 2}}));
    BOOST_TEST((action{reverse{7}} != action{reverse{8}}));
    const action copy = action{restore{2, 5, 9}};
    action assigned = reverse{1};
    assigned = copy;
    BOOST_TEST((assigned == copy));
}

BOOST_AUTO_TEST_CASE(text_form_matches_the_design_vocabulary)
{
    BOOST_TEST(to_string(advance{3, 17}) == "advance 3 17");
    BOOST_TEST(to_string(advance{3, 4, true}) == "advance 3 4 tape");
    BOOST_TEST(to_string(store{1, 2, 17}) == "store 1 2 17");
    BOOST_TEST(to_string(restore{0, 0, 0}) == "restore 0 0 0");
    BOOST_TEST(to_string(free_slot{2, 9}) == "free 2 9");
    BOOST_TEST(to_string(reverse{9223372036854775806}) == "reverse 9223372036854775806");
    std::ostringstream os;
    os << action{store{0, 1, 4}};
    BOOST_TEST(os.str() == "store 0 1 4");
}

BOOST_AUTO_TEST_CASE(text_form_round_trips)
{
    const std::vector<action> all{advance{0, 1},       advance{5, 9223372036854775807},
                                  store{0, 0, 0},      store{3, 1000000, 42},
                                  restore{1, 2, 3},    free_slot{0, 7},
                                  reverse{0},          reverse{123456789012345},
                                  advance{0, 1, true}, advance{9223372036854775806, 9223372036854775807, true}};
    for (const action& a : all)
        BOOST_TEST((parse_action(to_string(a)) == a), to_string(a));
    BOOST_TEST((parse_action("  advance\t2   5 \r") == action{advance{2, 5}}));
    BOOST_TEST((parse_action("advance 2 3  tape\r") == action{advance{2, 3, true}}));
}

BOOST_AUTO_TEST_CASE(malformed_lines_are_refused_with_the_line_named)
{
    for (const char* bad :
         {"", "jump 1 2", "advance 1", "advance 5 2", "advance 2 2", "store 0 1", "store 0 -1 3", "restore a b c",
          "free 0", "reverse", "reverse 1 2", "reverse 99999999999999999999", "advance 1 2 3", "advance 1 3 tape",
          "advance 1 2 tapes", "advance 1 2 tape tape", "advance 2 1 tape"}) {
        try {
            (void)parse_action(bad);
            BOOST_ERROR("accepted: " << bad);
        } catch (const argument_error& e) {
            const std::string what = e.what();
            BOOST_TEST(what.find("not an action") != std::string::npos, what);
            if (*bad != '\0')
                BOOST_TEST(what.find(bad) != std::string::npos, what);
        }
    }
}
