/* tessera-cluster quota-phase: where in its CPU quota's period a node's group runs.
 *
 * Spins for SECONDS in the caller's cgroup, on THREADS threads (default 1; a group with a
 * quota of F >= 1 cores needs floor(F) + 1 of them to be stopped at all), and watches the
 * clock on the first: under a quota the group is stopped when it has used its runtime and
 * resumed when the period timer refills it, so every resume (the clock jumping by 300 us
 * or more) falls at the same point of the period. Prints that point, CLOCK_MONOTONIC modulo
 * PERIOD_US, as the median of the resumes' offsets from the first one (wrapped to within
 * half a period), on one line for scripts:
 *     phase_us=X resumes=N
 * The cluster script makes every node's group again until its phase is node 1's, so that
 * the emulated nodes run and stop together, as merely slower nodes would (a group's period
 * timer keeps the arbitrary phase it had when the group was made).
 * Exit status: 0; 1 when it saw fewer than 3 resumes (no quota stops it, or the period is
 * longer than the spin); 2 on bad usage. Plain C, built with cc by the cluster script. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double end_us;

static void* burn(void* unused) {
    (void)unused;
    while (now_us() < end_us) {
    }
    return NULL;
}

enum { max_resumes = 100000, max_threads = 64 };
static double offsets[max_resumes];

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: quota-phase PERIOD_US SECONDS [THREADS]\n");
        return 2;
    }
    const double period = atof(argv[1]), seconds = atof(argv[2]);
    const int threads = argc > 3 ? atoi(argv[3]) : 1;
    if (!(period >= 1000) || !(seconds > 0 && seconds <= 60) || threads < 1 || threads > max_threads) {
        fprintf(stderr, "quota-phase: PERIOD_US must be >= 1000, SECONDS in (0, 60], THREADS 1..%d\n",
                max_threads);
        return 2;
    }
    end_us = now_us() + seconds * 1e6;
    pthread_t others[max_threads];
    for (int i = 1; i < threads; ++i) {
        if (pthread_create(&others[i], NULL, burn, NULL) != 0) {
            fprintf(stderr, "quota-phase: cannot start thread %d\n", i);
            return 1;
        }
    }
    double first = -1;
    int n = 0;
    for (double last = now_us(), t = last; t < end_us; last = t, t = now_us()) {
        if (t - last < 300 || n == max_resumes) continue;
        const double phase = fmod(t, period);
        if (first < 0) first = phase;
        offsets[n++] = fmod(phase - first + 1.5 * period, period) - 0.5 * period;
    }
    for (int i = 1; i < threads; ++i) pthread_join(others[i], NULL);
    if (n < 3) {
        fprintf(stderr, "quota-phase: %d resumes in %g s: no quota with a %g us period stops this group\n",
                n, seconds, period);
        return 1;
    }
    qsort(offsets, (size_t)n, sizeof offsets[0], by_value);
    printf("phase_us=%.0f resumes=%d\n", fmod(first + offsets[n / 2] + period, period), n);
    return 0;
}
