package transforms

import (
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
	var st PairStats
	byID := make(map[string]*shards.Row, len(rows))
	var replies []*shards.Row
	for i := range rows {
		r := &rows[i]
		byID[r.ID] = r
		if strings.HasPrefix(r.ID, "t1_") {
			replies = append(replies, r)
		}
	}
	slices.SortFunc(replies, func(a, b *shards.Row) int { return strings.Compare(a.ID, b.ID) })
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
		pair := shards.Row{
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
			Meta: map[string]string{
				"parent_id":     parentID,
				"parent_author": parent.Meta["author"],
				"reply_author":  reply.Meta["author"],
				"created_utc":   reply.Meta["created_utc"],
				"kind":          kind,
			},
		}
		if score, ok := reply.Meta["score"]; ok {
			pair.Meta["score"] = score
		}
		st.Pairs++
		emit(pair)
	}
	return st
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
