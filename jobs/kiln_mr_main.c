/* kiln_mr_main.c -- kiln-mr: run one registered MapReduce job on MPI.
 *
 *   mpirun -np N kiln-mr JOB [-D key=value]... [job arguments]
 *
 * (./run_job.sh wraps the mpirun line.) --help, --version, --list and
 * JOB --help answer without starting MPI. The jobs it knows are the ones
 * jobs/jobs.c registers; the engine (mapreduce/) names none. The exit status is 0 only when the
 * output is complete; otherwise the sysexits.h code of the agreed failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "jobs/jobs.h"
#include "mapreduce/mr_job.h"
#include "mapreduce/mr_output.h"
#include "storage/base/status.h"

static void
kiln_mr_usage(FILE *out)
{
    fputs("Usage: kiln-mr JOB [-D key=value]... [job arguments]\n"
          "       kiln-mr JOB --help\n"
          "       kiln-mr --sweep DIR\n"
          "       kiln-mr --list | --help | --version\n"
          "Runs a MapReduce job on MPI: start it under mpirun (or ./run_job.sh).\n"
          "\n"
          "Jobs:\n",
          out);
    const mr_job_def *const *defs;
    size_t n = mr_job_list(&defs);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-12s %s\n", defs[i]->name, defs[i]->summary);
    fputs("\n"
          "Engine settings (-D key=value, before or after the job's arguments):\n"
          "  mapreduce.job.reduces=N   reduce partitions (default: the table's regions for\n"
          "                            table jobs, else one per rank); set it to get the\n"
          "                            same output files for any rank count\n"
          "  kiln.sort.mb=N            map output buffer per rank in MiB (default 100)\n"
          "  kiln.shuffle.mb=N         MiB per shuffle round per rank (default 32, or\n"
          "                            kiln.sort.mb if that is smaller)\n"
          "  kiln.merge.factor=N       runs merged at once (default 100)\n"
          "  kiln.spill.compress=C     snappy (default) or none\n"
          "  kiln.tmp.dir=DIR          local spill directory (default $TMPDIR or /tmp)\n"
          "  kiln.partitioner=P        hash (default) or total (sorted across partitions,\n"
          "                            split keys sampled from the input); not for a job\n"
          "                            with its own partitioner (secondarysort)\n"
          "  kiln.sampler.points=N     sample points for kiln.partitioner=total (1000)\n"
          "  kiln.progress=BOOL        print ' map X% reduce Y%' lines (default true)\n"
          "  kiln.progress.ms=N        at most one progress line per N ms (1000)\n"
          "  kiln.job.time=MS          the job's clock (ms since the epoch), for\n"
          "                            reproducible timestamps\n"
          "  kiln.input.buffer.kb=N    input read size (1024)\n"
          "  kiln.map.share=BOOL       ranks on one host share their map input: one that\n"
          "                            ends its own takes pieces of another's (true)\n"
          "  kiln.map.piece.kb=N       size of those pieces in KiB (2048)\n"
          "\n"
          "--sweep DIR removes a run's spill directory DIR on this host and the\n"
          "temporary output a failed job noted there (run_job.sh runs it on every host\n"
          "after each run).\n"
          "\n"
          "Output: DIR is refused if it exists; it appears whole at the end, with\n"
          "_job.json (counters, timings, split keys) and _SUCCESS written last,\n"
          "both inside the temporary directory that one rename publishes.\n"
          "Exit status: 0 ok, 64 usage, 65 bad data, 66 no input, 73 output exists,\n"
          "70 internal error, 74 I/O error.\n",
          out);
}

int
main(int argc, char **argv)
{
    jobs_register_all();
    if (argc < 2) {
        kiln_mr_usage(stderr);
        return EX_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        kiln_mr_usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("kiln-mr %s\n", KILN_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--list") == 0) {
        const mr_job_def *const *defs;
        size_t n = mr_job_list(&defs);
        for (size_t i = 0; i < n; i++)
            printf("%s\t%s\n", defs[i]->name, defs[i]->summary);
        return 0;
    }
    if (strcmp(cmd, "--sweep") == 0) {
        if (argc != 3) {
            fputs("kiln-mr: --sweep takes one directory\n", stderr);
            return EX_USAGE;
        }
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        int left = mr_output_sweep(argv[2], NULL);
        if (left > 0)
            fprintf(stderr, "kiln-mr: host %s: could not remove all of %s\n", host, argv[2]);
        return left > 0 ? EX_IOERR : 0;
    }
    const mr_job_def *def = mr_job_find(cmd);
    if (def == NULL) {
        fprintf(stderr, "kiln-mr: unknown job '%s'\nTry 'kiln-mr --help' for the list of jobs.\n",
                cmd);
        return EX_USAGE;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(def->usage, stdout);
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    kiln_err err;
    status_clear(&err);
    kiln_status s = mr_job_main(def, argc - 1, argv + 1, &err);
    MPI_Finalize();
    return status_exit_code(s);
}
