// The table of remat::plan_taped_chain memory by memory (chain_taped_table.hpp, taped_chain_layers): every split of
// every entry priced, as the plain recurrence prices it, in loops that stream and vectorise.
//
// Every size is at least one unit (a state has at least one byte), so an entry at memory M reads the right parts
// H(s+j, ., M - u_s) and the taped advance's H(s+1, ., M - t_s) from lower memories only, and the left parts
// E(s, j, M) from its own memory, its own start, shorter. So the table is filled a memory at a time, and within a
// memory a start at a time along the split: once the entries (s, l' < l) are final, entry (s, l) is, and its split
// j = l is added to every longer entry of start s at once, min(E(s, l + k, M), (F(s, l) + H(s+l, k, M - u_s)) +
// E(s, l, M)) for k = 1 .. T - s - l: a loop over consecutive entries of two arrays (each memory's E and H held as
// one array, row after row), which the compiler vectorises (AVX-512, AVX2 or SSE2, chosen when it runs). Starts
// are taken in tiles of 16, so that a row of H read for one is read from the cache for the others.
//
// The loop keeps the least value only; which split gave it (the option the plan needs, for the few entries the plan
// reads) is found again when asked (code): the least j whose price equals the entry's, priced the same way. Each
// split is priced in the plain recurrence's order of sums, splits in increasing j, the taped advance taken where
// strictly cheaper in E and where at most as dear in H. So the optimum and every option are the plain
// recurrence's, to the bit. It prices every split that fits (about T^3 U / 6; no bound drops any), at ~0.3 ns each
// at 1,000 steps, where the bounded search of the dense table (chain_taped_table.cpp) prices 2-5 times fewer at ~6 ns
// each (its entries read the rows of every split of their start at one memory, a cache line or a page apart).
#include "chain_taped_table.hpp"
#include "table_substrate.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::size_t tile = 16; // starts sharing the rows of H they read

// longer[k] = min(longer[k], (forward + right[k]) + value): `v < now ? v : now` is exactly the vector minimum
// instruction's choice, so every build computes the same values; compiled three times, the widest the machine runs.
#define REMAT_ADD_SPLIT_LOOP                                                                                           \
    for (std::size_t k = 0; k < count; ++k) {                                                                          \
        const double v = forward + right[k] + value;                                                                   \
        longer[k] = v < longer[k] ? v : longer[k];                                                                     \
    }

void add_split_plain(double* __restrict longer, const double* __restrict right, double forward, double value,
                     std::size_t count)
{
    REMAT_ADD_SPLIT_LOOP
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2")]] void add_split_avx2(double* __restrict longer, const double* __restrict right, double forward,
                                            double value, std::size_t count)
{
    REMAT_ADD_SPLIT_LOOP
}

[[gnu::target("avx512f")]] void add_split_avx512(double* __restrict longer, const double* __restrict right,
                                                 double forward, double value, std::size_t count)
{
    REMAT_ADD_SPLIT_LOOP
}
#endif
#undef REMAT_ADD_SPLIT_LOOP

using add_split_fn = void (*)(double*, const double*, double, double, std::size_t);

add_split_fn widest_add_split()
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return add_split_avx512;
    if (__builtin_cpu_supports("avx2"))
        return add_split_avx2;
#endif
    return add_split_plain;
}

} // namespace

// One array of the planners' table memory (huge pages where given), written before it is read.
class taped_chain_layers::table {
public:
    explicit table(std::size_t n) : n_(n), p_(table_allocator<double>().allocate(n)) {}
    ~table() { table_allocator<double>().deallocate(p_, n_); }
    table(const table&) = delete;
    table& operator=(const table&) = delete;
    double* data() { return p_; }
    [[nodiscard]] const double* data() const { return p_; }

private:
    std::size_t n_;
    double* p_;
};

double* taped_chain_layers::layer(table& t, std::uint64_t m) const
{
    return t.data() + static_cast<std::size_t>(m) * rows_;
}

const double* taped_chain_layers::layer(const table& t, std::uint64_t m) const
{
    return t.data() + static_cast<std::size_t>(m) * rows_;
}

taped_chain_layers::taped_chain_layers(const taped_unit_chain& chain, std::uint64_t units)
    : taped_chain_optimum(chain), n_(chain.f.size()), units_(units), width_(units + 1)
{
    for (std::size_t s = 0; s < n_; ++s) {
        offset_.push_back(rows_);
        rows_ += n_ - s;
    }
    e_ = std::make_unique<table>(rows_ * width_);
    h_ = std::make_unique<table>(rows_ * width_);
    forward_.resize(rows_);
    widest_.resize(rows_);
    for (std::size_t s = 0; s < n_; ++s) {
        double forward = 0;
        std::uint64_t widest = 0;
        for (std::size_t j = 1; s + j <= n_; ++j) {
            forward += c_.f[s + j - 1]; // F(s, j), summed from s as the plain recurrence sums it
            widest = std::max(widest, c_.p[s + j - 1]);
            forward_[offset_[s] + j - 1] = forward;
            widest_[offset_[s] + j - 1] = widest;
        }
    }
    // A start whose first rows are those of a start to its right (the same steps, step by step: part_kinds) copies
    // them, at each memory, from that start's, filled in an earlier tile: the nearest such start, so the most rows.
    alike_.assign(n_, n_);
    const std::vector<std::size_t> kinds = part_kinds(chain, offset_);
    for (std::size_t end = n_; end > 0; end = end > tile ? end - tile : 0)
        for (std::size_t s = end > tile ? end - tile : 0; s < end; ++s)
            for (std::size_t later = end; later < n_; ++later)
                if (kinds[offset_[s] + n_ - later - 1] == kinds[offset_[later] + n_ - later - 1]) {
                    alike_[s] = later;
                    break;
                }
    const add_split_fn add_split = widest_add_split();
    for (std::uint64_t m = 0; m <= units_; ++m)
        fill_layer(m, add_split);
    table_work_meter() += work_;
}

taped_chain_layers::~taped_chain_layers() = default;

void taped_chain_layers::fill_layer(std::uint64_t m, add_split_fn add_split)
{
    double* const e = layer(*e_, m);
    double* const h = layer(*h_, m);
    std::fill(e, e + rows_, infinity);
    // What each start of a tile reads at this memory, worked out once per start rather than once per entry.
    struct start {
        double* e;             // E(s, l, m) at [l - 1]
        double* h;             // H(s, l, m) at [l - 1]
        const double* taped;   // H(s+1, l-1, m - t_s) at [l - 2]; null where the taped advance does not fit
        const double* right;   // H at m - u_s (rows of every start); null where a snapshot of x_s does not fit
        const double* forward; // F(s, l) at [l - 1]
        const std::uint64_t* widest;
        std::uint64_t fits;   // m - u_s: a split j fits where max(p_s .. p_{s+j-1}) <= this
        double single;        // E(s, 1, m)
        double single_held;   // H(s, 1, m)
        bool stored;          // the taped advance is an option of E (m >= 2 u_s)
        const double* same_e; // E(s', l, m), H(s', l, m) of the start s' alike its first `shared` rows
        const double* same_h;
        std::size_t shared;
    };
    std::array<start, tile> starts{};
    for (std::size_t end = n_; end > 0;) {
        const std::size_t first = end > tile ? end - tile : 0;
        for (std::size_t s = first; s < end; ++s) {
            start& st = starts[s - first];
            st.e = e + offset_[s];
            st.h = h + offset_[s];
            st.taped = s + 1 < n_ && m >= c_.taped_from[s] ? layer(*h_, m - c_.t[s]) + offset_[s + 1] : nullptr;
            st.right = m >= c_.u[s] ? layer(*h_, m - c_.u[s]) : nullptr;
            st.forward = forward_.data() + offset_[s];
            st.widest = widest_.data() + offset_[s];
            st.fits = m >= c_.u[s] ? m - c_.u[s] : 0;
            st.single = m >= std::max(2 * c_.u[s], c_.r[s]) ? c_.b[s] : infinity;
            st.single_held = m >= c_.r[s] ? c_.b[s] : infinity;
            st.stored = m >= 2 * c_.u[s];
            st.shared = n_ - alike_[s];
            st.same_e = e + offset_[std::min(alike_[s], n_ - 1)];
            st.same_h = h + offset_[std::min(alike_[s], n_ - 1)];
        }
        for (std::size_t x = first + 1; x <= n_; ++x)
            for (std::size_t s = first; s < std::min(end, x); ++s) {
                // Entry (s, l): its splits are all in; add its taped advance, then its split to the longer ones.
                const start& st = starts[s - first];
                const std::size_t l = x - s;
                double value = st.single;
                double held = st.single_held;
                if (l <= st.shared) {
                    value = st.same_e[l - 1];
                    held = st.same_h[l - 1];
                } else if (l > 1) {
                    value = st.e[l - 1];
                    const double taped = st.taped != nullptr ? c_.f[s] + st.taped[l - 2] + c_.bt[s] : infinity;
                    if (st.stored && taped < value)
                        value = taped;
                    held = taped <= value && taped != infinity ? taped : value; // on a tie, no snapshot stored
                }
                st.e[l - 1] = value;
                st.h[l - 1] = held;
                if (x == n_ || value == infinity || st.right == nullptr || st.widest[l - 1] > st.fits)
                    continue;
                // E(s, l + k, m) against (F(s, l) + H(s+l, k, m - u_s)) + E(s, l, m), k = 1 .. T - x, past the
                // entries copied
                const std::size_t skip = st.shared > l ? st.shared - l : 0;
                if (skip >= n_ - x)
                    continue;
                add_split(st.e + l + skip, st.right + offset_[x] + skip, st.forward[l - 1], value, n_ - x - skip);
                work_ += n_ - x - skip;
            }
        end = first;
    }
}

double taped_chain_layers::taped_cost(std::size_t s, std::size_t l, std::uint64_t m) const
{
    return m >= c_.taped_from[s] ? c_.f[s] + layer(*h_, m - c_.t[s])[offset_[s + 1] + l - 2] + c_.bt[s] : infinity;
}

double taped_chain_layers::whole(std::uint64_t m) const
{
    return layer(*h_, m)[offset_[0] + n_ - 1];
}

// The options as the plain recurrence takes them: the least split of the least price, then the taped advance.
std::uint16_t taped_chain_layers::code(std::size_t s, std::size_t l, std::uint64_t m) const
{
    if (l == 1)
        return 0;
    const double* e = layer(*e_, m);
    const double* h = m >= c_.u[s] ? layer(*h_, m - c_.u[s]) : nullptr;
    double best = infinity;
    std::uint16_t option = 0;
    for (std::size_t j = 1; j < l && m >= c_.u[s] + widest_[offset_[s] + j - 1]; ++j) {
        const double v = forward_[offset_[s] + j - 1] + h[offset_[s + j] + l - j - 1] + e[offset_[s] + j - 1];
        if (v < best) {
            best = v;
            option = static_cast<std::uint16_t>(j);
        }
    }
    const double taped = taped_cost(s, l, m);
    if (m >= 2 * c_.u[s] && taped < best) {
        best = taped;
        option = e_taped;
    }
    return taped <= best && taped != infinity ? static_cast<std::uint16_t>(option | h_taped) : option;
}

} // namespace remat::detail
