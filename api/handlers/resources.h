// Determined's allocation reports (`det resources allocations|raw|aggregated`), from the
// allocation ledger (projections/allocation_reports.h). As in Determined, every signed-in user
// may read them under basic authorization, and only cluster admins where roles apply (the reports
// name every user's work). Query names are accepted as the CLI (snake_case) and the bindings
// (camelCase) send them.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /resources/allocation/allocations-csv?timestamp_after=T&timestamp_before=T (text/csv)
net::Response AllocationsCsvRoute(Call& call);
// GET /resources/allocation/raw (text/csv) and /api/v1/resources/allocation/raw (JSON):
// ?timestamp_after=T&timestamp_before=T
net::Response RawAllocationsCsvRoute(Call& call);
net::Response RawAllocationsRoute(Call& call);
// GET /resources/allocation/aggregated (text/csv) and /api/v1/resources/allocation/aggregated
// (JSON): ?start_date=D&end_date=D&period=RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY|MONTHLY
net::Response AggregatedAllocationsCsvRoute(Call& call);
net::Response AggregatedAllocationsRoute(Call& call);

}  // namespace cairn::api
