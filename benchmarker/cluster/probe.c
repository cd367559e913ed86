/* tessera-cluster probe: does the emulated cluster really have two levels?
 *
 * 1. Topology, as Open MPI sees it: every rank's MPI_Get_processor_name and the size of
 *    its MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) group. On the emulated cluster each
 *    node must have its own name and its own shared-memory group.
 * 2. Full-path ping-pong (P-3PC Fig. 8 method) between rank 0 and an intra-node peer and
 *    between rank 0 and an inter-node peer: rank 0 sends n bytes, the peer answers with
 *    0 bytes. Per SPEC, the stored full-path value is a total with the constant included:
 *        T_full(n) = roundtrip(n, 0) - t_cf,  t_cf estimated as roundtrip(0, 0) / 2.
 *    Medians over many samples; the pairs are measured one after the other while every
 *    other rank sleeps (the emulated nodes share the machine's cores, so a spinning
 *    bystander would steal the core the measured pair needs).
 *
 * Output (stdout, rank 0 only), one line per record, key=value, for scripts to grep:
 *    node rank=R name=NAME shared_size=S shared_leader=L
 *    topology nodes_by_name=K shared_groups=G consistent=yes|no
 *    pair level=intra|inter a=0 b=B
 *    sample level=intra|inter bytes=N reps=M rt_median_us=.. rt_min_us=.. full_us=..
 *    check ... result=pass|fail
 * Exit status: 0, or 1 when an --expect-* or --min-ratio check fails, 2 on bad usage.
 *
 * Plain C and MPI only, so the cluster script can build it with mpicc into a temp dir
 * without touching the project's build. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_DATA = 7001, TAG_REPLY = 7002, MAX_SIZES = 32 };

struct options {
    long sizes[MAX_SIZES];
    int n_sizes;
    int reps;
    int warmup;
    int expect_nodes;        /* 0: no check */
    int expect_per_node;     /* 0: no check */
    long check_bytes;        /* -1: no ratio check */
    double min_ratio;        /* inter full / intra full must be >= this */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: probe [--sizes B1,B2,...] [--reps N] [--warmup N]\n"
            "             [--expect-nodes K] [--expect-ranks-per-node R]\n"
            "             [--check-bytes B --min-ratio X]\n"
            "Prints topology (processor names, shared-memory groups) and full-path\n"
            "ping-pong medians for an intra-node and an inter-node pair.\n");
}

static int parse_sizes(const char *text, struct options *opt)
{
    char *copy = strdup(text);
    char *save = NULL;
    opt->n_sizes = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        long v = strtol(tok, &end, 10);
        if (*end != '\0' || v < 0 || opt->n_sizes == MAX_SIZES) {
            free(copy);
            return -1;
        }
        opt->sizes[opt->n_sizes++] = v;
    }
    free(copy);
    return opt->n_sizes > 0 ? 0 : -1;
}

/* Returns 0 on success, 1 for --help, -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *opt)
{
    *opt = (struct options){.reps = 40, .warmup = 5, .check_bytes = -1, .min_ratio = 0.0};
    parse_sizes("0,1024,65536,1048576", opt);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (!v) return -1;
        if (!strcmp(a, "--sizes")) {
            if (parse_sizes(v, opt)) return -1;
        } else if (!strcmp(a, "--reps")) {
            opt->reps = atoi(v);
        } else if (!strcmp(a, "--warmup")) {
            opt->warmup = atoi(v);
        } else if (!strcmp(a, "--expect-nodes")) {
            opt->expect_nodes = atoi(v);
        } else if (!strcmp(a, "--expect-ranks-per-node")) {
            opt->expect_per_node = atoi(v);
        } else if (!strcmp(a, "--check-bytes")) {
            opt->check_bytes = atol(v);
        } else if (!strcmp(a, "--min-ratio")) {
            opt->min_ratio = atof(v);
        } else {
            return -1;
        }
        ++i;
    }
    return opt->reps > 0 && opt->warmup >= 0 ? 0 : -1;
}

/* A barrier that sleeps between polls: bystanders must not spin on the shared cores. */
static void sleepy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    const struct timespec nap = {0, 200 * 1000};
    MPI_Ibarrier(comm, &req);
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    while (!done) {
        nanosleep(&nap, NULL);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One series of round trips (n bytes there, 0 back) between ranks a and b. Rank a stores
 * the times in microseconds; the other ranks wait in a sleepy barrier. */
static void ping_pong(int me, int a, int b, long n, int warmup, int reps, char *buf,
                      double *times_us)
{
    if (me == a) {
        for (int i = -warmup; i < reps; ++i) {
            double t0 = MPI_Wtime();
            MPI_Send(buf, (int)n, MPI_BYTE, b, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, b, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t1 = MPI_Wtime();
            if (i >= 0) times_us[i] = (t1 - t0) * 1e6;
        }
    } else if (me == b) {
        for (int i = -warmup; i < reps; ++i) {
            MPI_Recv(buf, (int)n, MPI_BYTE, a, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, a, TAG_REPLY, MPI_COMM_WORLD);
        }
    }
    sleepy_barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    struct options opt;
    int parsed = parse_args(argc, argv, &opt);
    if (parsed != 0) {
        if (me == 0) usage(parsed > 0 ? stdout : stderr);
        MPI_Finalize();
        return parsed > 0 ? 0 : 2;
    }

    /* --- topology ------------------------------------------------------------------ */
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int name_len = 0;
    MPI_Get_processor_name(name, &name_len);
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shared);
    int shared_size, leader = me;
    MPI_Comm_size(shared, &shared_size);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);

    char *names = malloc((size_t)np * MPI_MAX_PROCESSOR_NAME);
    int *sizes = malloc((size_t)np * sizeof *sizes);
    int *leaders = malloc((size_t)np * sizeof *leaders);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    MPI_Allgather(&shared_size, 1, MPI_INT, sizes, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);

    int nodes_by_name = 0, groups = 0, consistent = 1, per_node_ok = 1;
    for (int r = 0; r < np; ++r) {
        const char *nr = names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        int first_of_name = 1;
        for (int q = 0; q < r; ++q) {
            const char *nq = names + (size_t)q * MPI_MAX_PROCESSOR_NAME;
            int same_name = strcmp(nr, nq) == 0;
            if (same_name) first_of_name = 0;
            /* Same name must mean same shared-memory group, and vice versa. */
            if (same_name != (leaders[r] == leaders[q])) consistent = 0;
        }
        nodes_by_name += first_of_name;
        groups += leaders[r] == r;
        if (opt.expect_per_node && sizes[r] != opt.expect_per_node) per_node_ok = 0;
    }

    /* The pairs: rank 0 with the lowest rank in its shared group, and with the lowest
     * rank outside it. */
    int intra_peer = -1, inter_peer = -1;
    for (int r = 1; r < np; ++r) {
        if (leaders[r] == leaders[0] && intra_peer < 0) intra_peer = r;
        if (leaders[r] != leaders[0] && inter_peer < 0) inter_peer = r;
    }

    int failed = 0;
    if (me == 0) {
        for (int r = 0; r < np; ++r)
            printf("node rank=%d name=%s shared_size=%d shared_leader=%d\n", r,
                   names + (size_t)r * MPI_MAX_PROCESSOR_NAME, sizes[r], leaders[r]);
        printf("topology nodes_by_name=%d shared_groups=%d consistent=%s\n", nodes_by_name,
               groups, consistent ? "yes" : "no");
        if (!consistent) {
            printf("check topology result=fail reason=names-and-shared-groups-disagree\n");
            failed = 1;
        }
        if (opt.expect_nodes) {
            int ok = nodes_by_name == opt.expect_nodes && groups == opt.expect_nodes;
            printf("check nodes expected=%d by_name=%d shared_groups=%d result=%s\n",
                   opt.expect_nodes, nodes_by_name, groups, ok ? "pass" : "fail");
            failed |= !ok;
        }
        if (opt.expect_per_node) {
            printf("check ranks_per_node expected=%d result=%s\n", opt.expect_per_node,
                   per_node_ok ? "pass" : "fail");
            failed |= !per_node_ok;
        }
        printf("pair level=intra a=0 b=%d\npair level=inter a=0 b=%d\n", intra_peer,
               inter_peer);
        fflush(stdout);
    }

    /* --- full-path ping-pong --------------------------------------------------------- */
    long max_bytes = opt.check_bytes > 0 ? opt.check_bytes : 0;
    for (int s = 0; s < opt.n_sizes; ++s)
        if (opt.sizes[s] > max_bytes) max_bytes = opt.sizes[s];
    char *buf = calloc((size_t)max_bytes + 1, 1);
    double *times = malloc((size_t)opt.reps * sizeof *times);
    const int peers[2] = {intra_peer, inter_peer};
    const char *level_names[2] = {"intra", "inter"};
    double rt0[2] = {0, 0};  /* median roundtrip(0, 0) per level: 2 t_cf */
    double full_at_check[2] = {-1, -1};

    /* Size 0 first: it gives t_cf for the full-path totals of the other sizes. */
    long order[MAX_SIZES + 2];
    int n_order = 0;
    order[n_order++] = 0;
    int check_listed = opt.check_bytes <= 0;
    for (int s = 0; s < opt.n_sizes; ++s) {
        if (opt.sizes[s] != 0) order[n_order++] = opt.sizes[s];
        if (opt.sizes[s] == opt.check_bytes) check_listed = 1;
    }
    if (!check_listed) order[n_order++] = opt.check_bytes;  /* always measure the check */

    sleepy_barrier(MPI_COMM_WORLD);
    for (int s = 0; s < n_order; ++s) {
        for (int l = 0; l < 2; ++l) {
            if (peers[l] < 0) continue;
            ping_pong(me, 0, peers[l], order[s], opt.warmup, opt.reps, buf, times);
            if (me != 0) continue;
            double rt = median(times, opt.reps);
            if (order[s] == 0) rt0[l] = rt;
            double full = rt - rt0[l] / 2.0;
            if (order[s] == opt.check_bytes) full_at_check[l] = full;
            printf("sample level=%s bytes=%ld reps=%d rt_median_us=%.3f rt_min_us=%.3f "
                   "full_us=%.3f\n",
                   level_names[l], order[s], opt.reps, rt, times[0], full);
            fflush(stdout);
        }
    }

    if (me == 0 && opt.check_bytes >= 0) {
        int ok = full_at_check[0] > 0 && full_at_check[1] > 0 &&
                 full_at_check[1] >= opt.min_ratio * full_at_check[0];
        printf("check levels bytes=%ld intra_full_us=%.3f inter_full_us=%.3f ratio=%.2f "
               "min_ratio=%.2f result=%s\n",
               opt.check_bytes, full_at_check[0], full_at_check[1],
               full_at_check[0] > 0 ? full_at_check[1] / full_at_check[0] : 0.0,
               opt.min_ratio, ok ? "pass" : "fail");
        failed |= !ok;
    }

    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(times);
    free(buf);
    free(leaders);
    free(sizes);
    free(names);
    MPI_Comm_free(&shared);
    MPI_Finalize();
    return failed ? 1 : 0;
}
