// Package lexicon maps tokens to the ids of a model's embedding table: the
// words of a vocabulary first (id = the word's index), then, for a model
// with out-of-vocabulary buckets, N hashed rows that tokens outside the
// vocabulary share by hash (Bucket). The featurize stage, the trainer's
// commands and evalsink map tokens through one Lexicon, so that an unseen
// word of an evaluation sentence gets the id the same word got in the
// training shards.
//
// The package imports the standard library only, so that evalsink and
// trainstep can use it without the Beam SDK that featurize links in.
package lexicon
