/*
 * interp_loop: libpcp's PM_MODE_INTERP replay in plain C, the reference bench_interp.py
 * and run_all.py time the kit's interpolation against.
 *
 *   interp_loop BASE SEC NSEC DELTA_NSEC COUNT PICKS PMID...
 *
 * Opens archive BASE, looks up each PMID's descriptor (PMIDs as decimal integers), sets
 * PM_MODE_INTERP from SEC.NSEC every DELTA_NSEC (either sign), calls pmFetchHighRes COUNT
 * times and extracts every value with pmExtractValue by its type.
 *
 * PICKS is "-" or a comma-separated list of fetch numbers (ascending) whose values are
 * printed, one JSON line each, in tests/differential/libpcp/pm_interp.py's encoding
 * (integers as numbers, "f32:"/"f64:" and the IEEE bits in hex, "str:" and the bytes in hex).
 * The last line is a JSON summary: timings of the open and of the fetch loop, end-of-log
 * fetches, values extracted and an order-independent checksum over every (fetch, pmid,
 * instance, value) that bench_interp.py computes for the kit's samples the same way.
 *
 * Exit status 0, 1 on any libpcp error (its message on stderr), 2 on bad arguments.
 */
#include <pcp/pmapi.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* splitmix64's finaliser: the checksum's mixing step (bench_interp.mix64 is the same) */
static uint64_t mix64(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* FNV-1a over a string's bytes: a string value's 64 bits for the checksum */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const char *what, int sts)
{
    fprintf(stderr, "interp_loop: %s: %s\n", what, pmErrStr(sts));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: interp_loop BASE SEC NSEC DELTA_NSEC COUNT PICKS|- PMID...\n");
        return 2;
    }
    const char *base = argv[1];
    long long sec = strtoll(argv[2], NULL, 10), nsec = strtoll(argv[3], NULL, 10);
    long long delta = strtoll(argv[4], NULL, 10);
    long count = strtol(argv[5], NULL, 10);
    const char *picks = strcmp(argv[6], "-") == 0 ? "" : argv[6];
    int npmid = argc - 7;
    pmID *pmids = calloc((size_t)npmid, sizeof(pmID));
    int *types = calloc((size_t)npmid, sizeof(int));
    if (!pmids || !types || count < 0)
        return 2;
    for (int i = 0; i < npmid; i++)
        pmids[i] = (pmID)strtoul(argv[7 + i], NULL, 10);

    double began = seconds(CLOCK_MONOTONIC);
    int sts = pmNewContext(PM_CONTEXT_ARCHIVE, base);
    if (sts < 0)
        return fail(base, sts);
    for (int i = 0; i < npmid; i++) {
        pmDesc desc;
        if ((sts = pmLookupDesc(pmids[i], &desc)) < 0)
            return fail("pmLookupDesc", sts);
        types[i] = desc.type;
    }
    struct timespec start = {(time_t)sec, (long)nsec};
    long long mag = delta < 0 ? -delta : delta, sign = delta < 0 ? -1 : 1;
    struct timespec step = {(time_t)(sign * (mag / 1000000000LL)), (long)(sign * (mag % 1000000000LL))};
    if ((sts = pmSetModeHighRes(PM_MODE_INTERP, &start, &step)) < 0)
        return fail("pmSetModeHighRes", sts);
    double opened = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);

    long eol = 0, nvalues = 0, next_pick = *picks ? strtol(picks, NULL, 10) : -1;
    uint64_t checksum = 0;
    char idbuf[32];
    for (long k = 0; k < count; k++) {
        pmHighResResult *rp;
        int show = k == next_pick;
        if (show) {
            const char *comma = strchr(picks, ',');
            picks = comma ? comma + 1 : "";
            next_pick = *picks ? strtol(picks, NULL, 10) : -1;
        }
        if ((sts = pmFetchHighRes(npmid, pmids, &rp)) < 0) {
            if (sts != PM_ERR_EOL)
                return fail("pmFetchHighRes", sts);
            eol++;
            if (show)
                printf("{\"fetch\":%ld,\"eol\":true,\"values\":{}}\n", k);
            continue;
        }
        if (show)
            printf("{\"fetch\":%ld,\"eol\":false,\"values\":{", k);
        for (int i = 0; i < rp->numpmid; i++) {
            pmValueSet *vs = rp->vset[i];
            int type = types[i];
            uint64_t key = mix64(((uint64_t)k << 32) ^ vs->pmid);
            if (show)
                printf("%s\"%s\":[", i ? "," : "", pmIDStr_r(vs->pmid, idbuf, sizeof(idbuf)));
            for (int j = 0; j < vs->numval; j++) {
                pmAtomValue atom;
                uint64_t bits = 0;
                if ((sts = pmExtractValue(vs->valfmt, &vs->vlist[j], type, &atom, type)) < 0)
                    return fail("pmExtractValue", sts);
                if (show)
                    printf("%s[%d,", j ? "," : "", vs->vlist[j].inst);
                switch (type) {
                case PM_TYPE_32:
                    bits = (uint64_t)(int64_t)atom.l;
                    if (show) printf("%" PRId32, atom.l);
                    break;
                case PM_TYPE_U32:
                    bits = atom.ul;
                    if (show) printf("%" PRIu32, atom.ul);
                    break;
                case PM_TYPE_64:
                    bits = (uint64_t)atom.ll;
                    if (show) printf("%" PRId64, atom.ll);
                    break;
                case PM_TYPE_U64:
                    bits = atom.ull;
                    if (show) printf("%" PRIu64, atom.ull);
                    break;
                case PM_TYPE_FLOAT: {
                    uint32_t f;
                    memcpy(&f, &atom.f, sizeof(f));
                    bits = f;
                    if (show) printf("\"f32:%08" PRIx32 "\"", f);
                    break;
                }
                case PM_TYPE_DOUBLE:
                    memcpy(&bits, &atom.d, sizeof(bits));
                    if (show) printf("\"f64:%016" PRIx64 "\"", bits);
                    break;
                case PM_TYPE_STRING:
                    bits = fnv1a(atom.cp);
                    if (show) {
                        printf("\"str:");
                        for (const char *c = atom.cp; *c; c++)
                            printf("%02x", (unsigned char)*c);
                        printf("\"");
                    }
                    free(atom.cp);
                    break;
                default:        /* aggregates and events: not in the benchmark archive */
                    if (type == PM_TYPE_AGGREGATE || type == PM_TYPE_EVENT ||
                        type == PM_TYPE_HIGHRES_EVENT)
                        free(atom.vbp);
                    if (show) printf("null");
                    break;
                }
                if (show)
                    printf("]");
                checksum += mix64(mix64(key ^ (uint32_t)vs->vlist[j].inst) ^ bits);
                nvalues++;
            }
            if (show)
                printf("]");
        }
        if (show)
            printf("}}\n");
        pmFreeHighResResult(rp);
    }
    double done = seconds(CLOCK_MONOTONIC), cpu1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    printf("{\"open_s\":%.6f,\"loop_s\":%.6f,\"loop_cpu_s\":%.6f,\"fetches\":%ld,\"eol\":%ld,"
           "\"values\":%ld,\"checksum\":\"%016" PRIx64 "\"}\n",
           opened - began, done - opened, cpu1 - cpu0, count, eol, nvalues, checksum);
    pmDestroyContext(pmWhichContext());
    free(pmids);
    free(types);
    return 0;
}
