// remat/remat.hpp — the core of remat: schedules, actions and their costs. Needs no third-party
// library; the HDF5, CUDA and SUNDIALS parts have their own headers and targets.
#pragma once

#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/binomial.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/range.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/store/snapshot_view.hpp"
