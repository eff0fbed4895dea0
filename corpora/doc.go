// Package corpora reads every raw corpus format parastream ingests and turns
// each record into an Example.
//
// Readers stream: they hold one record (one line, or one quoted record for
// Quora) in memory at a time, whatever the size of the file. Input is
// decompressed on the fly; the compression (gzip, bzip2, xz, zstd or none) is
// detected from the first bytes of the file, never from its name.
//
// Every reader implements Reader. Next returns the next Example, io.EOF at the
// end, a *ParseError for a malformed record (the reader stays usable: count
// it, keep it with a RejectsWriter, and call Next again), or any other error
// when the file itself is bad (truncated archive, I/O error, two parallel
// files of different lengths). Drain applies that policy in one call.
//
// Each format documents how its records map to Example: what A, B, Label,
// Group and Dataset mean for that corpus. The table of formats is Formats.
package corpora
