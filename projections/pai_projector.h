// The openpai projection: OpenPAI jobs as their status routes show them. One PaiJobView per job,
// keyed "pai/job/<job id>", and "pai/name/<username>/<jobName>" -> job id. OpenPAI job ids start
// with "pai-" and their tasks' ids with the job id and a '.', so the task events of other work
// cost this projector no read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kPaiProjector = "openpai";
inline constexpr std::string_view kPaiJobIdPrefix = "pai-";

class PaiProjector : public Projector {
 public:
  const std::string& name() const override { return kPaiProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::PaiJobView>> ReadPaiJob(ViewReader& reader, const std::string& job_id);
Result<std::optional<views::PaiJobView>> ReadPaiJobByName(ViewReader& reader,
                                                          const std::string& username,
                                                          const std::string& job_name);
// Every job, by job id.
Result<std::vector<views::PaiJobView>> ReadPaiJobs(ViewReader& reader);

}  // namespace cairn::projections
