package text

import "strings"

// HFSplitPattern is Tokenize's split written as one regular expression in
// the syntax of the Hugging Face tokenizers' Split pre-tokenizer
// (Oniguruma; tokenizer.json, behaviour "Isolated" after a
// WhitespaceSplit), for models exported to sentence-transformers and
// model2vec (evalsink.ExportStatic). Its alternatives are tried in
// Tokenize's order at each position: URLs, e-mail addresses, Reddit
// references, mentions and hashtags; abbreviations (single letters joined
// by periods, Mr. Dr. etc.); a word before a clitic ("do" of "don't");
// the clitics n't 's 'm 'd 're 've 'll; words with their inner hyphens,
// slashes, periods, apostrophes, ampersands and digit commas and colons;
// runs of . ! ? - = * ~ #; any other character alone.
//
// What the format cannot say, and so differs from Tokenize: a URL's
// trailing ")" or "]" is left out whether or not it closes one opened
// inside the URL; "cannot", "gonna", "gotta" and "wanna" stay one word;
// a sign or leading period of a number is its own token; Han, Hiragana
// and Katakana are split as words, not a character a token; marks and
// emoji sequences after a symbol are tokens of their own.
func HFSplitPattern() string {
	word := `[\p{L}\p{M}\p{N}_\x{200C}\x{200D}]`
	notClitic := `(?!(?:[sSmMdD]|[rR][eE]|[vV][eE]|[lL][lL])(?!` + word + `))`
	alts := []string{
		`(?:[hH][tT][tT][pP][sS]?://|[fF][tT][pP]://|[wW][wW][wW]\.)[^\s]*[^\s.,;:!?'"’”*>)\]]`,
		`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`,
		`/?[ru]/[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*/?`,
		`[@#]` + word + `+`,
		`(?:\p{L}\.){2,}`,
		`(?:[mM][rR][sS]?|[mM][sS]|[dD][rR]|[pP][rR][oO][fF]|[sS][rR]|[jJ][rR]|[sS][tT]|[vV][sS]|[eE][tT][cC]|[iI][nN][cC]|[lL][tT][dD]|[cC][oO])\.(?!` + word + `)`,
		word + `+(?=[nN]['’][tT](?!` + word + `))`,
		`[nN]['’][tT](?!` + word + `)`,
		`['’](?:[sSmMdD]|[rR][eE]|[vV][eE]|[lL][lL])(?!` + word + `)`,
		word + `+(?:(?:[\-/.&]|['’]` + notClitic + `|(?<=\p{N})[,:](?=\p{N}))` + word + `+)*`,
		`\.+|!+|\?+|-+|=+|\*+|~+|#+`,
		`[^\s]`,
	}
	return strings.Join(alts, "|")
}
