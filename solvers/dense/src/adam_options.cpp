// Adam's option checks (remat/dense/adam.hpp), compiled once for both back ends.
#include "remat/dense/adam_options.hpp"

#include "remat/error.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace remat::dense {

namespace {
[[noreturn]] void refuse(const char* name, double value, const char* expected)
{
    std::ostringstream s;
    s << "Adam option " << name << " = " << value << " (expected " << expected << ")";
    throw argument_error(s.str());
}
} // namespace

void check_adam_options(const adam_options& o)
{
    if (!(std::isfinite(o.learning_rate) && o.learning_rate > 0))
        refuse("learning_rate", o.learning_rate, "a finite number > 0");
    if (!(o.beta1 >= 0 && o.beta1 < 1))
        refuse("beta1", o.beta1, "0 <= beta1 < 1");
    if (!(o.beta2 >= 0 && o.beta2 < 1))
        refuse("beta2", o.beta2, "0 <= beta2 < 1");
    if (!(std::isfinite(o.epsilon) && o.epsilon > 0))
        refuse("epsilon", o.epsilon, "a finite number > 0");
}

} // namespace remat::dense
