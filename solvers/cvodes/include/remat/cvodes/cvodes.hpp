// remat/cvodes/cvodes.hpp — everything of remat::cvodes: CVODES adjoints in bounded memory.
#pragma once

#include "remat/cvodes/adjoint_solver.hpp"
#include "remat/cvodes/error.hpp"
#include "remat/cvodes/in_ram.hpp"
#include "remat/cvodes/problem.hpp"
#include "remat/cvodes/solve.hpp"
#include "remat/cvodes/windows.hpp"
