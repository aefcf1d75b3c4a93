// The allocation ledger: every allocation's slots, pool, owner, job and times, for Determined's
// allocation reports (projections/allocation_reports.h). Keys: "alloc/<start, 8 bytes big-endian>
// <allocation id>" -> views::AllocationView, in start order; "job/<id>" -> AllocationJobView (its
// workspace, experiment and labels as they are now); "task/<id>" -> AllocationTaskView;
// "workspace/<id, 4 bytes big-endian>" -> the workspace's name. Times are the events' envelope
// times: an allocation starts when it is placed and ends when it is released (a gang's part when
// that part exits), exactly as `cairn replay usage` charges it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kAllocationsProjector = "allocations";

class AllocationProjector : public Projector {
 public:
  const std::string& name() const override { return kAllocationsProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// The allocations that overlap [after, before) (unix micros; a held allocation runs on), with
// their jobs and the workspaces' names.
struct AllocationLedgerRead {
  std::vector<views::AllocationView> allocations;  // in start order
  std::map<std::string, views::AllocationJobView> jobs;
  std::map<int32_t, std::string> workspace_names;
  int64_t first_start_unix_micros = 0;  // the ledger's first allocation, 0 when it has none
  // The latest event time the ledger folded: "now" for a past moment's reports.
  int64_t folded_until_unix_micros = 0;
};
Result<AllocationLedgerRead> ReadAllocationLedger(ViewReader& reader, int64_t after,
                                                  int64_t before);

}  // namespace cairn::projections
