package transforms

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/parastream/parastream/shards"
)

// PairOptions configures Reddit thread pairing.
type PairOptions struct {
	// Context is the number of earlier turns kept with each pair: the
	// parent's ancestors, oldest first, up to Context of them. 0 keeps none.
	Context int
	// Titles also pairs each submission title with each top-level comment
	// of its thread, when the submission was read.
	Titles bool
}

// PairStats counts what pairing one thread gave.
type PairStats struct {
	// Pairs is the (parent, reply) pairs emitted, Titles the (title,
	// top-level comment) pairs among them.
	Pairs, Titles int64
	// Orphans is the replies whose parent comment is not in the thread
	// (filtered out, deleted, or not in the dump).
	Orphans int64
	// NoTitle is the top-level comments that could not pair with their
	// submission's title (with Titles, when the submission was not read or
	// was filtered out).
	NoTitle int64
}

// PairThread turns the comments of one Reddit thread into input-response
// pairs, the conversational research's training examples: for each comment
// whose parent comment is present, A is the parent and B the reply. With
// Titles, a top-level comment also pairs with the submission's title when
// the submission is among rows.
//
// rows are one thread's records as the reddit-comments and
// reddit-submissions readers give them and Prepare leaves them (A
// normalised, TokensA set, Meta parent_id and author); a submission is a
// row whose ID starts with "t3_". Pairs are emitted in the order of the
// reply's ID, so the output does not depend on the input's order.
//
// A pair: ID "reddit:<reply id>" (a reply has one parent, so the ID is
// unique); Corpus "reddit"; Dataset the subreddit; A, TokensA the parent;
// B, TokensB the reply; Context up to opt.Context earlier turns, oldest
// first (stopping at an ancestor that is missing); Group the thread
// (link_id); Source the reply's; Meta parent_id, parent_author,
// reply_author, created_utc and score of the reply, and kind ("comment" or
// "title").
func PairThread(rows []shards.Row, opt PairOptions, emit func(shards.Row)) PairStats {
	thread := make([]*shards.Row, len(rows))
	for i := range rows {
		thread[i] = &rows[i]
	}
	var p pairer
	return p.pairThread(thread, opt, func(pair *shards.Row) {
		out := *pair
		out.Meta = maps.Clone(pair.Meta)
		emit(out)
	})
}

// pairer pairs threads one after the other (PairThread), with the buffers
// of one thread reused for the next: the pipeline's pairing stage spills
// each pair as soon as it is made, so it need not allocate a row and a
// map for each.
type pairer struct {
	byID    map[string]*shards.Row
	replies []*shards.Row
	pair    shards.Row
	meta    map[string]string
}

// pairerMapRows is the largest thread whose ID map the pairer keeps for
// the next thread: clearing a map costs its capacity, and most threads are
// small.
const pairerMapRows = 256

// pairThread is PairThread over pointers to the thread's rows; emit gets a
// row, Meta included, that is valid until it returns.
func (p *pairer) pairThread(rows []*shards.Row, opt PairOptions, emit func(*shards.Row)) PairStats {
	var st PairStats
	byID := p.byID
	switch {
	case len(rows) > pairerMapRows:
		byID = make(map[string]*shards.Row, len(rows))
	case byID == nil:
		byID = make(map[string]*shards.Row, pairerMapRows)
		p.byID = byID
	default:
		clear(byID)
	}
	replies := p.replies[:0]
	for _, r := range rows {
		// Of two records with one ID (a dump that repeats a comment), the
		// later in the input is the one kept, whatever order the thread's
		// rows come in.
		if seen, ok := byID[r.ID]; !ok || bySource(seen, r) < 0 {
			byID[r.ID] = r
		}
		if strings.HasPrefix(r.ID, "t1_") {
			replies = append(replies, r)
		}
	}
	slices.SortFunc(replies, func(a, b *shards.Row) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), bySource(a, b))
	})
	if p.meta == nil {
		p.meta = make(map[string]string, 6)
	}
	for _, reply := range replies {
		parentID := reply.Meta["parent_id"]
		kind := "comment"
		if strings.HasPrefix(parentID, "t3_") {
			kind = "title"
		}
		if kind == "title" && !opt.Titles {
			continue
		}
		parent, ok := byID[parentID]
		switch {
		case !ok && kind == "title":
			st.NoTitle++
			continue
		case !ok:
			st.Orphans++
			continue
		case kind == "title":
			st.Titles++
		}
		clear(p.meta)
		p.meta["parent_id"] = parentID
		p.meta["parent_author"] = parent.Meta["author"]
		p.meta["reply_author"] = reply.Meta["author"]
		p.meta["created_utc"] = reply.Meta["created_utc"]
		p.meta["kind"] = kind
		if score, ok := reply.Meta["score"]; ok {
			p.meta["score"] = score
		}
		p.pair = shards.Row{
			ID:           "reddit:" + reply.ID,
			Corpus:       "reddit",
			Dataset:      reply.Dataset,
			A:            parent.A,
			B:            reply.A,
			LangA:        parent.LangA,
			LangB:        reply.LangA,
			GroupKey:     reply.GroupKey,
			SourceFile:   reply.SourceFile,
			SourceLine:   reply.SourceLine,
			SourceOffset: reply.SourceOffset,
			TokensA:      parent.TokensA,
			TokensB:      reply.TokensA,
			Context:      ancestors(byID, parent, opt.Context),
			Meta:         p.meta,
		}
		st.Pairs++
		emit(&p.pair)
	}
	clear(replies)
	p.replies = replies[:0]
	p.pair = shards.Row{}
	return st
}

// bySource orders two records by where they were read: file, then
// offset, then line.
func bySource(a, b *shards.Row) int {
	return cmp.Or(strings.Compare(a.SourceFile, b.SourceFile), cmp.Compare(a.SourceOffset, b.SourceOffset), cmp.Compare(a.SourceLine, b.SourceLine))
}

// ancestors returns up to n texts above r in its thread, oldest first.
func ancestors(byID map[string]*shards.Row, r *shards.Row, n int) []string {
	var out []string
	for len(out) < n {
		p, ok := byID[r.Meta["parent_id"]]
		if !ok {
			break
		}
		out = append(out, p.A)
		r = p
	}
	slices.Reverse(out)
	return out
}
