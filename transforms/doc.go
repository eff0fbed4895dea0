// Package transforms holds the Beam transforms and DoFns of the extraction
// pipelines: reading and preparing records (Read, with PrepareConfig),
// Reddit thread pairing (Pair), spilling to buckets (Spill, Scatter),
// deduplication, split assignment and shard writing (DedupeAndWrite,
// DedupeAndSplit, WriteShards), token-budget sampling, rejects and the
// in-process Progress of a local run.
//
// The plain text functions they apply (normalisation, tokenisation, filter
// rules, the seeded hash and splits) live in package transforms/text,
// which carries no Beam; the spill file format the bucket stages write is
// package transforms/internal/spill.
package transforms
