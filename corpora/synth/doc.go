// Package synth writes realistic synthetic corpora in the formats the
// corpora readers read, at any size, for benchmarks and demos: pushshift
// Reddit comments and submissions, Europarl, PPDB, Quora question pairs
// and SimpWiki. Each generator streams to an io.Writer in constant memory
// whatever Config.Rows, and writes the same bytes for the same Config
// (seed included): its random numbers come from its own generator
// (wyrand), not from math/rand, so they do not change with the Go version
// (the floating-point draws go through package math, whose last bits may
// differ between architectures). Fewer Rows write a prefix of the same
// file with more. A generated file read by its reader gives exactly
// Rows-Malformed examples, and rejects the malformed rows for the reasons
// Stats.MalformedByReason lists; nothing else is skipped but the Quora
// header.
//
// # Reddit
//
// Comments are pushshift records (one JSON object a line, written like
// the dumps: ", " and ": " separators, everything outside ASCII as \u
// escapes) with the real key sets of several years, chosen by Config.Era:
// 18 keys in 2005, 21 in 2012 (created_utc a string), 38 in 2019, 47 in
// 2020, 66 to 71 in 2024 (created_utc and created floats, _meta); by
// default each record picks one (2024 55%, 2020 20%, 2019 10%, 2012 10%,
// 2005 5%), so a file mixes integer, string and float created_utc.
//
// They come in threads. Submissions open as a Poisson process; 35% get no
// comment, the others a heavy-tailed number (P(S >= s) = s^-1.15, capped
// at 5,000): most threads have 1 to 20 comments, about one in two hundred
// a hundred or more. A thread's comments arrive at the order statistics of
// exponential delays after its submission (a log-normal time scale, median
// 20 minutes, longer for big threads), so the threads interleave as they
// do in a monthly dump, and the file is in created_utc order. The first
// comment of a thread answers the submission (parent_id the link id);
// later ones answer the submission (70% for the second, falling toward
// 30% in long threads) or one of the thread's latest 24 comments, mostly
// the newest. Ids are base 36 and rise with time, as on Reddit. Only the
// open threads are held in memory, at most Config.MaxActiveThreads of
// them; Config.CommentRate sets the comments a second (default 12: ten
// million comments span about ten days from Config.Start).
//
// Authors are drawn from three million names with Zipf activity (Reddit's
// generated Adjective_Noun1234 names, words run together, short handles,
// throwaways); the submitter comes back in its thread, and so do earlier
// participants. Subreddits are drawn from 125 real ones with Zipf
// weights; the French, German, Japanese and Russian ones hold most of the
// non-English comments.
//
// The shares of well-formed comments, measured on 100,000 by
// TestRedditStructure with the corpora reader:
//
//	body "[deleted]" or "[removed]"        5%   (2.5% each)
//	author "[deleted]"                     5.4% (those, and 1% of the rest)
//	bot author                             2%   (AutoModerator, RemindMeBot, *bot, *_bot: names ending in "bot")
//	over 350 characters                   10%
//	over 2,000 characters                  0.25% (essays of 2 to 10 KB)
//	a URL (https://, http://, www.)        5%
//	a markdown link [text](url)            2.5%
//	&gt; (a quote) or &amp;                4.5%
//	starting with "/r/" or "@"             0.8%
//	non-English (fr, de, ja, ru)           4%
//	emoji                                  2.7%
//	top-level                             58%
//
// English text comes from sentence templates (statements, questions,
// answers) whose slots draw from some 2,200 words by part of speech with
// Zipf weights, inflected by rule (about 4,900 word forms), with numbers,
// prices, years and names; comments are one-line reactions ("This.",
// "lol") 12% of the time, otherwise a heavy-tailed number of sentences in
// paragraphs, sometimes in lower case, with lists, edits, mentions,
// "&#x200B;" and the other marks of real comments.
//
// Malformed comments (Config.MalformedRate, default 0.1%) are one of:
// truncated JSON (bad_json), a Latin-1 byte in the body (bad_utf8), no id
// (missing_field), created_utc "abc" (bad_number). A reply never answers
// a malformed comment.
//
// RedditThreads also writes the submission (RS record) of every thread as
// it opens, and RedditSubmissions those alone: pairs of a submission's
// title and its top-level comments come from joining the two on link_id.
//
// # The other corpora
//
// Europarl writes aligned English and French proceedings from a
// synchronous grammar; PPDB writes 2.0 (or 1.0) rules whose features agree
// with their texts and whose entailment class follows the kind of pair;
// Quora writes question pairs, 37% duplicates, with questions reused
// across pairs and CSV quoting; SimpWiki writes normal and simple
// sentences of articles. Their documentation gives the details.
package synth
