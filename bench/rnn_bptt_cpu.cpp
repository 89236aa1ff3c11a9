// bench/rnn_bptt on the CPU: Thrust's CPP back end and OpenBLAS, snapshots in a host store.
#include "rnn_bptt_measure.hpp"

namespace remat::bench {

rnn_bptt_result measure_rnn_bptt_on_cpu(const rnn_bptt_options& o)
{
    return measure_rnn_bptt(o, "CPU");
}

} // namespace remat::bench
