/** Every field of a flow-control key record, always present (docs/flow-control.md): the key, 7 numbers, 3 flags. */
export const FLOW_KEY_FIELDS = [
  "flowControlKey",
  "waitListSize",
  "parallelismMax",
  "parallelismCount",
  "rateMax",
  "rateCount",
  "ratePeriod",
  "ratePeriodStart",
  "isPaused",
  "isPinnedParallelism",
  "isPinnedRate",
];
