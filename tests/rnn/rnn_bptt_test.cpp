// Back-propagation through time under remat::run: the loss and the gradient (parameters and dL/dh_0) of
// every schedule kind and store are bit-identical to the store-everything run, in float and double, GRU
// and LSTM, with and without dropout (taped_revolve plans too, which keep some steps' tapes); and bad input is refused
// with a message naming it, nothing changed.
#define BOOST_TEST_MODULE rnn_bptt
#include <boost/test/unit_test.hpp>

#include "rnn_problem.hpp"
#include "same_bits.hpp"

#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace remat;

namespace {

template <class T>
test::rnn_gradient run_with(rnn::sequence_model<T>& model, const rnn::sequence<T>& data, const any_schedule& plan,
                            slot_t slots)
{
    rnn::bptt<T> bp(model);
    thrust::device_vector<T> grad(static_cast<std::size_t>(model.parameter_count()));
    host_store store(slots);
    const rnn::bptt_result r = bp.gradient(plan, store, data, grad);
    return {r.loss, test::to_host(grad), test::to_host(bp.initial_adjoint())};
}

bool same(const test::rnn_gradient& a, const test::rnn_gradient& b)
{
    return std::memcmp(&a.loss, &b.loss, sizeof(double)) == 0 && test::same_bits(a.params, b.params) &&
           test::same_bits(a.initial, b.initial);
}

template <class T>
void check_every_schedule(rnn::cell_kind cell, double dropout, rnn::loss_at loss, bool flush_denormals = false)
{
    const rnn::rnn_shape shape{.cell = cell, .input = 3, .hidden = 8, .layers = 2, .output = 2, .dropout = dropout};
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    rnn::sequence_model<T> model(b, layout, 5);
    model.set_parameters(layout.initial_parameters(3));
    model.set_training(true);
    model.set_dropout_seed(99);
    model.set_flush_denormals(flush_denormals);
    const step_t steps = 57;
    const auto data = test::random_sequence<T>(shape, 5, steps, loss, 4);
    const test::rnn_gradient reference = test::store_all_gradient(model, data);
    const std::string what =
        std::string(rnn::name(cell)) + (dropout > 0 ? " with dropout" : "") + (sizeof(T) == 4 ? " float" : " double");
    BOOST_TEST_REQUIRE(std::isfinite(reference.loss), what);
    for (double g : reference.params)
        BOOST_TEST_REQUIRE(std::isfinite(g), what);
    for (slot_t slots : {1, 2, 3, 5, 9, 20}) {
        BOOST_TEST(same(run_with(model, data, revolve(steps, slots), slots), reference), what << " revolve " << slots);
        if (slots >= 13) // uniform spacing needs about 2 sqrt(T) slots
            BOOST_TEST(same(run_with(model, data, uniform::fit(steps, slots), slots), reference),
                       what << " uniform " << slots);
        BOOST_TEST(same(run_with(model, data, online_revolve(slots).replay(steps, online_end::at_last_step), slots),
                        reference),
                   what << " online " << slots);
    }
    BOOST_TEST(same(run_with(model, data, uniform(steps, 8), 15), reference), what << " uniform every 8");
    // Two levels: a small fast one and a priced slow one, in a tiered store of two host stores.
    const cost_model levels{{{"fast", 3, 0, 0}, {"slow", 12, 2, 2}}};
    rnn::bptt<T> bp(model);
    thrust::device_vector<T> grad(static_cast<std::size_t>(model.parameter_count()));
    tiered_store store(host_store(3), host_store(12));
    const rnn::bptt_result r = bp.gradient(multilevel(steps, levels), store, data, grad);
    BOOST_TEST(same({r.loss, test::to_host(grad), test::to_host(bp.initial_adjoint())}, reference),
               what << " multilevel");
    BOOST_TEST(r.report.forward_steps > static_cast<std::uint64_t>(steps)); // it did recompute
    // Taped plans: a step whose tape (h_k and its gates) is kept is back-propagated without a re-run.
    const std::int64_t state = model.state_size();
    const auto tape_units = static_cast<slot_t>((state + model.tape_size() + state - 1) / state);
    // One bptt object throughout: the tapes it keeps from one call (dirty) serve the next, growing to the
    // most any call needed, and the bits do not change.
    std::uint64_t most_tapes = 0;
    for (const slot_t units :
         {slot_t{9}, slot_t{2}, slot_t{40}, static_cast<slot_t>(tape_units * (steps - 1)), slot_t{40}}) {
        const taped_revolve plan(steps, units, tape_units);
        host_store taped_store(std::max<slot_t>(plan.cost().peak_slots, 1));
        const rnn::bptt_result t = bp.gradient(plan, taped_store, data, grad);
        BOOST_TEST(same({t.loss, test::to_host(grad), test::to_host(bp.initial_adjoint())}, reference),
                   what << " taped, " << units << " units");
        most_tapes = std::max(most_tapes, plan.cost().peak_tapes);
        BOOST_TEST(bp.tapes_kept() == most_tapes, what << " taped, " << units << " units");
        BOOST_TEST(t.report.taped_steps == plan.cost().taped_steps);
        BOOST_TEST(t.report.tape_reverses == plan.cost().taped_steps);
        BOOST_TEST(t.report.forward_steps + t.report.reverse_steps - t.report.tape_reverses == plan.evaluations());
        if (units >= tape_units * (steps - 1)) // every step but the last taped: plain BPTT's evaluations
            BOOST_TEST(t.report.taped_steps == static_cast<std::uint64_t>(steps - 1), what);
    }
    BOOST_TEST(most_tapes > 0u);
    bp.release_tapes();
    BOOST_TEST(bp.tapes_kept() == 0u);
    // Plain BPTT (every tape kept, nothing recomputed): the same bits, so recomputation is exact.
    const rnn::bptt_result plain = bp.plain_gradient(data, grad);
    BOOST_TEST(same({plain.loss, test::to_host(grad), test::to_host(bp.initial_adjoint())}, reference),
               what << " plain BPTT");
    BOOST_TEST(plain.report.peak_snapshot_bytes ==
               static_cast<std::uint64_t>(steps * model.kept_per_step()) * sizeof(T));
    // Its time split into the forward sweep and the backward sweep, which make up the whole (to rounding).
    BOOST_TEST(plain.report.forward_seconds > 0);
    BOOST_TEST(plain.report.adjoint_seconds > 0);
    BOOST_TEST(std::abs(plain.report.forward_seconds + plain.report.adjoint_seconds - plain.report.seconds) <= 1e-9);
    // Its buffers are kept: a second call reuses them (the same bits, whatever they held), until released.
    BOOST_TEST(bp.plain_bytes_kept() == plain.report.peak_snapshot_bytes);
    const rnn::bptt_result again = bp.plain_gradient(data, grad);
    BOOST_TEST(same({again.loss, test::to_host(grad), test::to_host(bp.initial_adjoint())}, reference),
               what << " plain BPTT, buffers reused");
    bp.release_plain();
    BOOST_TEST(bp.plain_bytes_kept() == 0u);
}

} // namespace

BOOST_AUTO_TEST_CASE(every_schedule_is_bit_identical_to_store_all)
{
    for (rnn::cell_kind cell : {rnn::cell_kind::gru, rnn::cell_kind::lstm})
        for (double dropout : {0.0, 0.4}) {
            check_every_schedule<double>(cell, dropout, rnn::loss_at::every_step);
            check_every_schedule<float>(cell, dropout, rnn::loss_at::last_step);
        }
}

BOOST_AUTO_TEST_CASE(flushing_subnormals_reads_and_writes_them_as_zero_and_keeps_every_schedule_bit_identical)
{
    // An LSTM with every weight and bias 0: each gate's pre-activation is 0, so f = i = 1/2 and g = 0, and
    // c' = f c. From a subnormal c, c' is subnormal too (half of it) unless subnormals are flushed, where
    // c reads as 0 and c' is 0.
    const rnn::rnn_shape shape{.cell = rnn::cell_kind::lstm, .input = 1, .hidden = 4, .layers = 1, .output = 1};
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    const std::int64_t batch = 2;
    rnn::sequence_model<float> model(b, layout, batch);
    model.set_parameters(std::vector<double>(static_cast<std::size_t>(layout.parameter_count()), 0.0));
    const auto data = test::random_sequence<float>(shape, batch, 3, rnn::loss_at::last_step, 5);
    const auto h_size = static_cast<std::size_t>(shape.hidden * batch);
    const float tiny = std::numeric_limits<float>::min() / 4; // subnormal
    BOOST_TEST_REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
    const auto c_after_one_step = [&](bool flush) {
        model.set_flush_denormals(flush);
        std::vector<float> s(static_cast<std::size_t>(model.state_size()), 0.0F);
        std::fill(s.begin() + static_cast<std::ptrdiff_t>(h_size), s.end(), tiny); // c (after h: H x B)
        thrust::device_vector<float> state(s.begin(), s.end());
        model.step(0, data, dense::view(state));
        return test::to_host(state);
    };
    const std::vector<double> kept = c_after_one_step(false);
    const std::vector<double> flushed = c_after_one_step(true);
    for (std::size_t e = h_size; e < kept.size(); ++e) {
        BOOST_TEST(std::fpclassify(static_cast<float>(kept[e])) == FP_SUBNORMAL, "c'[" << e << "] = " << kept[e]);
        BOOST_TEST(flushed[e] == 0.0, "c'[" << e << "] = " << flushed[e] << " with subnormals flushed");
    }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // The caller's mode is put back: here, subnormals kept.
    BOOST_TEST((__builtin_ia32_stmxcsr() & rnn::detail::flush_denormals_scope::flags) == 0u);
#endif
    volatile float one_half = 0.5F; // (computed at run time, in this thread's mode)
    BOOST_TEST(std::fpclassify(tiny * one_half) == FP_SUBNORMAL);

    for (rnn::cell_kind cell : {rnn::cell_kind::gru, rnn::cell_kind::lstm})
        check_every_schedule<float>(cell, 0.4, rnn::loss_at::last_step, true);
}

BOOST_AUTO_TEST_CASE(bias_gradients_summed_by_columns_have_the_bits_of_dense_row_sums)
{
    // The CPU's bias gradient (rnn/detail/cell_columns.hpp) against remat::dense::row_sums, which it
    // replaced: out += the row sums of a gate gradient, bit for bit, for float and double.
    const auto check = [](auto zero) {
        using T = decltype(zero);
        const std::int64_t rows = 37;
        const std::int64_t cols = 9;
        const std::vector<double> a_values = test::random_values(static_cast<std::size_t>(rows * cols), 11, -3, 3);
        const std::vector<double> out_values = test::random_values(static_cast<std::size_t>(rows), 12, -1, 1);
        // Converted on the host first: Thrust's converting copy into a device_vector binds a null policy
        // reference (UBSan reports it) on its CPU back end.
        const std::vector<T> a_host(a_values.begin(), a_values.end());
        const std::vector<T> out_host(out_values.begin(), out_values.end());
        const thrust::device_vector<T> a(a_host.begin(), a_host.end());
        thrust::device_vector<T> expected(out_host.begin(), out_host.end());
        dense::blas b;
        dense::row_sums(b, dense::dense_matrix<const T>(thrust::raw_pointer_cast(a.data()), rows, cols),
                        dense::view(expected), T(1));
        std::vector<T> got(out_values.begin(), out_values.end());
        std::vector<T> sums(static_cast<std::size_t>(rows));
        rnn::detail::row_sums_by_columns(thrust::raw_pointer_cast(a.data()), rows, cols, sums.data());
        rnn::detail::add_sums(sums.data(), rows, got.data());
        const std::vector<double> want = test::to_host(expected);
        BOOST_TEST(test::same_bits(std::vector<double>(got.begin(), got.end()), want), sizeof(T) << "-byte floats");
    };
    check(0.0F);
    check(0.0);
}

BOOST_AUTO_TEST_CASE(dropout_changes_the_gradient_and_a_new_seed_changes_it_again)
{
    const rnn::rnn_shape shape{
        .cell = rnn::cell_kind::lstm, .input = 2, .hidden = 6, .layers = 2, .output = 1, .dropout = 0.5};
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    rnn::sequence_model<double> model(b, layout, 4);
    model.set_parameters(layout.initial_parameters(5));
    const auto data = test::random_sequence<double>(shape, 4, 20, rnn::loss_at::every_step, 6);
    const test::rnn_gradient off = test::store_all_gradient(model, data); // not training: no dropout
    model.set_training(true);
    model.set_dropout_seed(1);
    const test::rnn_gradient one = test::store_all_gradient(model, data);
    model.set_dropout_seed(2);
    const test::rnn_gradient two = test::store_all_gradient(model, data);
    BOOST_TEST(one.loss != off.loss);
    BOOST_TEST(two.loss != one.loss);
    BOOST_TEST(!test::same_bits(one.params, two.params));
}

namespace {

// Runs `f`, requires remat::error whose message contains `needle`.
template <class Error = error>
void expect_error(const std::function<void()>& f, const std::string& needle)
{
    try {
        f();
        BOOST_ERROR("no error; expected one mentioning '" << needle << "'");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, e.what()
                                                                                << " (expected '" << needle << "')");
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(bad_input_is_refused_with_a_clear_message)
{
    const rnn::rnn_shape shape{.cell = rnn::cell_kind::gru, .input = 2, .hidden = 4, .output = 1};
    const rnn::sequence_shape seq{.input = 2, .output = 1, .batch = 3, .steps = 4};
    const std::vector<double> inputs(2 * 3 * 4, 0.5);
    const std::vector<double> targets(3, 0.1);
    // Sequences.
    expect_error<argument_error>(
        [&] { rnn::sequence<double>({.input = 2, .output = 1, .batch = 3, .steps = 0}, inputs, targets); },
        "sequence length 0");
    expect_error<argument_error>([&] { rnn::sequence<double>(seq, std::vector<double>(5, 0.0), targets); },
                                 "got 5 values (expected 2 features x 3 batch x 4 steps = 24)");
    std::vector<double> nan_inputs = inputs;
    nan_inputs[2 * 3 * 2 + 2 * 1 + 1] = std::numeric_limits<double>::quiet_NaN();
    expect_error<argument_error>([&] { rnn::sequence<double>(seq, nan_inputs, targets); },
                                 "value nan at step 2, batch member 1, feature 1");
    std::vector<double> inf_targets = targets;
    inf_targets[2] = std::numeric_limits<double>::infinity();
    expect_error<argument_error>([&] { rnn::sequence<double>(seq, inputs, inf_targets); }, "targets: value inf");
    // Shapes.
    expect_error<argument_error>(
        [&] { rnn::rnn_layout({.cell = rnn::cell_kind::gru, .input = 2, .hidden = 0, .output = 1}); },
        "RNN hidden size 0");
    expect_error<argument_error>([&] { rnn::rnn_layout({.input = 2, .hidden = 4, .output = 1, .dropout = 1.0}); },
                                 "RNN dropout 1");
    expect_error<argument_error>([&] { (void)rnn::parse_cell("rnn"); }, "cell 'rnn' (expected gru or lstm)");
    // A sequence that does not fit the model; a plan of another length; a budget of no slot.
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    rnn::sequence_model<double> model(b, layout, 3);
    model.set_parameters(layout.initial_parameters(1));
    rnn::bptt<double> bp(model);
    thrust::device_vector<double> grad(static_cast<std::size_t>(model.parameter_count()), 7.0);
    const rnn::sequence<double> wide({.input = 3, .output = 1, .batch = 3, .steps = 4}, std::vector<double>(36, 0.1),
                                     targets);
    host_store store(4);
    expect_error<argument_error>(
        [&] { (void)bp.gradient(revolve(4, 2), store, wide, grad); },
        "sequence of 3 input features, 1 targets, batch 3 does not fit the model (2 input features");
    const rnn::sequence<double> data(seq, inputs, targets);
    const rnn::sequence<double> other_batch({.input = 2, .output = 1, .batch = 2, .steps = 4},
                                            std::vector<double>(16, 0.1), std::vector<double>(2, 0.0));
    expect_error<argument_error>([&] { (void)bp.gradient(revolve(4, 2), store, other_batch, grad); }, "batch 2");
    expect_error<schedule_error>([&] { (void)bp.gradient(revolve(5, 2), store, data, grad); },
                                 "a schedule of 5 steps for a sequence of 4");
    thrust::device_vector<double> short_grad(3);
    expect_error<argument_error>([&] { (void)bp.gradient(revolve(4, 2), store, data, short_grad); }, "gradient length");
    // Nothing was half-done: the gradient was never touched, and a good run still works afterwards.
    for (double g : test::to_host(grad))
        BOOST_TEST_REQUIRE(g == 7.0);
    const rnn::bptt_result r = bp.gradient(revolve(4, 2), store, data, grad);
    BOOST_TEST(r.loss == test::store_all_gradient(model, data).loss);
}

// The model's own step functions are public (plain BPTT by hand: docs/rnn.md): each refuses a step outside
// the sequence and a sequence that does not fit the model, as step() does, instead of reading past the
// inputs or targets (loss_term and backward_step read the targets of step k, and backward_step its input).
BOOST_AUTO_TEST_CASE(the_model_refuses_a_step_outside_the_sequence_or_a_sequence_that_does_not_fit)
{
    const rnn::rnn_shape shape{.cell = rnn::cell_kind::lstm, .input = 2, .hidden = 4, .layers = 2, .output = 1};
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    rnn::sequence_model<double> model(b, layout, 3);
    model.set_parameters(layout.initial_parameters(1));
    const auto data = test::random_sequence<double>(shape, 3, 4, rnn::loss_at::every_step, 5);
    const rnn::rnn_shape wide_shape{.cell = rnn::cell_kind::lstm, .input = 2, .hidden = 4, .layers = 2, .output = 3};
    const auto wide = test::random_sequence<double>(wide_shape, 3, 4, rnn::loss_at::every_step, 5);
    thrust::device_vector<double> state(static_cast<std::size_t>(model.state_size()), 0.25);
    thrust::device_vector<double> adjoint(static_cast<std::size_t>(model.state_size()), 1.0);
    thrust::device_vector<double> tape(static_cast<std::size_t>(model.tape_size()), 0.5);
    thrust::device_vector<double> grad(static_cast<std::size_t>(model.parameter_count()), 7.0);
    const auto s = dense::view(std::as_const(state));
    const auto t = dense::view(std::as_const(tape));
    for (const step_t k : {step_t{-1}, step_t{4}, step_t{1} << 40}) {
        const std::string outside = "RNN step " + std::to_string(k) + " outside the sequence's steps 0..3";
        expect_error<argument_error>([&] { model.step(k, data, dense::view(state)); }, outside);
        expect_error<argument_error>([&] { (void)model.loss_term(k, data, s); }, outside);
        expect_error<argument_error>(
            [&] { (void)model.adjoint_step(k, data, s, dense::view(adjoint), dense::view(grad)); }, outside);
        expect_error<argument_error>([&] { model.record_step(k, data, dense::view(state), dense::view(tape)); },
                                     outside);
        expect_error<argument_error>(
            [&] { (void)model.backward_step(k, data, s, t, dense::view(adjoint), dense::view(grad)); }, outside);
    }
    const std::string misfit = "sequence of 2 input features, 3 targets, batch 3 does not fit the model";
    expect_error<argument_error>([&] { (void)model.loss_term(3, wide, s); }, misfit);
    expect_error<argument_error>(
        [&] { (void)model.backward_step(3, wide, s, t, dense::view(adjoint), dense::view(grad)); }, misfit);
    // Nothing was touched.
    for (double v : test::to_host(state))
        BOOST_TEST_REQUIRE(v == 0.25);
    for (double v : test::to_host(adjoint))
        BOOST_TEST_REQUIRE(v == 1.0);
    for (double g : test::to_host(grad))
        BOOST_TEST_REQUIRE(g == 7.0);
}

// Hidden size x batch is bounded by 2^34 (the kernels' indices): compared before multiplying, since a product
// past 2^63 overflowed (undefined; hidden 1024 x batch 2^54 wrapped to 0), passed the bound, and the model
// ended in std::bad_alloc instead of the argument_error naming the sizes.
BOOST_AUTO_TEST_CASE(hidden_size_times_batch_is_bounded_without_overflow)
{
    const rnn::rnn_layout layout({.cell = rnn::cell_kind::gru, .input = 2, .hidden = 1024, .output = 1});
    dense::blas b;
    expect_error<argument_error>([&] { rnn::sequence_model<float> m(b, layout, std::int64_t{1} << 54); },
                                 "RNN hidden size 1024 x batch 18014398509481984 (at most 2^34 supported)");
    expect_error<argument_error>([&] { rnn::sequence_model<float> m(b, layout, std::int64_t{1} << 24); },
                                 "RNN hidden size 1024 x batch 16777216");
    const rnn::rnn_layout odd({.cell = rnn::cell_kind::gru, .input = 1, .hidden = 3, .output = 1});
    // 3 x 5726623061 = 2^34 - 1 is within the bound; one more member is not.
    BOOST_TEST(((std::int64_t{1} << 34) - 1) / 3 == 5726623061);
    expect_error<argument_error>([&] { rnn::sequence_model<float> m(b, odd, 5726623062); }, "x batch 5726623062");
}
