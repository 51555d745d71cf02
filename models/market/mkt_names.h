/* mkt_names.h - the names under which the market's tables and series stand in a results file
 * (docs/results-format.md), declared once. The model writes them (mkt_model.c), the report, the
 * fuzz targets and the tests read them, and the Python package's spotlab/names.py is generated
 * from this file (scripts/names.py; the test `names_python` fails when the two differ). Header
 * only: a reader includes it without linking the model. One line per name, `#define MKT_TABLE_X
 * "x"` or `#define MKT_SERIES_X "x"`, which is what scripts/names.py reads. */
#ifndef SPOTLAB_MKT_NAMES_H
#define SPOTLAB_MKT_NAMES_H

/* Tables: one record per row. */
#define MKT_TABLE_PROVIDERS "providers"       /* one row per provider and replication world */
#define MKT_TABLE_JOBS "jobs"                 /* one row per job */
#define MKT_TABLE_AVAILABILITY "availability" /* a sample of hosts' state changes */
#define MKT_TABLE_HOSTS "hosts"               /* one row per host */
#define MKT_TABLE_DAILY_INCOME "daily_income" /* a sample of providers' income per day */

/* Series: integer counters, per bin (hour, billing interval) or for the whole run. */
#define MKT_SERIES_RENTED "rented_gpu_ms_by_region"
#define MKT_SERIES_AVAIL "available_gpu_ms_by_region"
#define MKT_SERIES_DEMAND "demand_gpu_ms_by_region"
#define MKT_SERIES_PRICE_SUM "price_sum_by_class"
#define MKT_SERIES_PRICE_N "price_n_by_class"
#define MKT_SERIES_LEDGER "ledger"
#define MKT_SERIES_PERSONA "by_persona"
#define MKT_SERIES_POOL "by_pool"
#define MKT_SERIES_JOBS "jobs_by_class"
#define MKT_SERIES_FLEX "flexible_pool"
#define MKT_SERIES_FEES "fees_by_pool"
#define MKT_SERIES_REGION "by_region"
#define MKT_SERIES_GPU "by_gpu_class"
#define MKT_SERIES_RPOOL "responses_by_pool"
#define MKT_SERIES_RSTRAT "bidding_by_strategy"
#define MKT_SERIES_POP "population_change"
#define MKT_SERIES_MONEY "money_flows"

#endif
