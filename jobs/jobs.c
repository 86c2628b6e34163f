/* jobs.c -- registers every job of kiln-mr with the engine's registry.
 */
#include "jobs/jobs.h"

void
jobs_register_all(void)
{
    mr_job_register(&wordcount_job);
    mr_job_register(&importtsv_job);
    mr_job_register(&useractions_job);
    mr_job_register(&tslog_job);
    mr_job_register(&orders_job);
    mr_job_register(&follows_job);
    mr_job_register(&reviews_job);
    mr_job_register(&rowcounter_job);
    mr_job_register(&dailyactivity_job);
    mr_job_register(&lookup_job);
    mr_job_register(&products_job);
    mr_job_register(&events_job);
    mr_job_register(&graph_job);
    mr_job_register(&export_job);
    mr_job_register(&import_job);
    mr_job_register(&cellcounter_job);
    mr_job_register(&copytable_job);
    mr_job_register(&verifytables_job);
    mr_job_register(&secondarysort_job);
    mr_job_register(&linelength_job);
}
