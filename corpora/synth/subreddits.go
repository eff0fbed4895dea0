package synth

// subreddit is one community threads are posted to.
type subreddit struct {
	name string
	lang string // the language most of its comments are in
	id   string // "t5_..."
}

// subredditList returns communities in rough order of activity; a thread
// picks one with Zipf weights. Those in other languages carry most of the
// non-English comments.
func subredditList() []struct{ name, lang string } {
	return []struct{ name, lang string }{
		{"AskReddit", "en"}, {"funny", "en"}, {"pics", "en"}, {"gaming", "en"}, {"worldnews", "en"},
		{"news", "en"}, {"todayilearned", "en"}, {"movies", "en"}, {"AmItheAsshole", "en"}, {"politics", "en"},
		{"nba", "en"}, {"nfl", "en"}, {"soccer", "en"}, {"videos", "en"}, {"memes", "en"},
		{"interestingasfuck", "en"}, {"Damnthatsinteresting", "en"}, {"mildlyinteresting", "en"}, {"aww", "en"}, {"science", "en"},
		{"technology", "en"}, {"personalfinance", "en"}, {"explainlikeimfive", "en"}, {"relationship_advice", "en"}, {"LifeProTips", "en"},
		{"wallstreetbets", "en"}, {"CryptoCurrency", "en"}, {"buildapc", "en"}, {"pcmasterrace", "en"}, {"leagueoflegends", "en"},
		{"france", "fr"}, {"de", "de"}, {"Minecraft", "en"}, {"DestinyTheGame", "en"}, {"Fireteams", "en"},
		{"MMA", "en"}, {"hockey", "en"}, {"baseball", "en"}, {"formula1", "en"}, {"woodworking", "en"},
		{"DIY", "en"}, {"HomeImprovement", "en"}, {"Cooking", "en"}, {"food", "en"}, {"Fitness", "en"},
		{"newsokur", "ja"}, {"Pikabu", "ru"}, {"running", "en"}, {"bicycling", "en"}, {"cars", "en"},
		{"Justrolledintotheshop", "en"}, {"whatisthisthing", "en"}, {"NoStupidQuestions", "en"}, {"TooAfraidToAsk", "en"}, {"unpopularopinion", "en"},
		{"books", "en"}, {"Music", "en"}, {"television", "en"}, {"anime", "en"}, {"Games", "en"},
		{"quebec", "fr"}, {"Finanzen", "de"}, {"Eldenring", "en"}, {"PS5", "en"}, {"NintendoSwitch", "en"},
		{"xboxone", "en"}, {"apple", "en"}, {"Android", "en"}, {"linux", "en"}, {"programming", "en"},
		{"learnprogramming", "en"}, {"webdev", "en"}, {"cscareerquestions", "en"}, {"dataisbeautiful", "en"}, {"space", "en"},
		{"newsokunomoral", "ja"}, {"KafkaFPS", "ru"}, {"Futurology", "en"}, {"history", "en"}, {"AskHistorians", "en"},
		{"europe", "en"}, {"canada", "en"}, {"unitedkingdom", "en"}, {"australia", "en"}, {"india", "en"},
		{"BitcoinMarkets", "en"}, {"HolUp", "en"}, {"facepalm", "en"}, {"PublicFreakout", "en"}, {"nextfuckinglevel", "en"},
		{"ich_iel", "de"}, {"rance", "fr"}, {"TikTokCringe", "en"}, {"gardening", "en"}, {"houseplants", "en"},
		{"dogs", "en"}, {"cats", "en"}, {"Parenting", "en"}, {"teenagers", "en"}, {"college", "en"},
		{"jobs", "en"}, {"antiwork", "en"}, {"legaladvice", "en"}, {"tifu", "en"}, {"OutOfTheLoop", "en"},
		{"boardgames", "en"}, {"magicTCG", "en"}, {"pokemon", "en"}, {"photography", "en"}, {"EarthPorn", "en"},
		{"japanlife", "en"}, {"russia", "en"}, {"travel", "en"}, {"Showerthoughts", "en"}, {"WritingPrompts", "en"},
		{"AskMen", "en"}, {"AskWomen", "en"}, {"MadeMeSmile", "en"}, {"Wellthatsucks", "en"}, {"CasualConversation", "en"},
		{"BundesligaFussball", "de"}, {"Quebec_Libre", "fr"}, {"ru", "ru"}, {"lowlevelaware", "ja"}, {"kickbasemanager", "de"},
	}
}

func newSubreddits() []subreddit {
	list := subredditList()
	out := make([]subreddit, len(list))
	for i, s := range list {
		h := uint64(14695981039346656037)
		for j := 0; j < len(s.name); j++ {
			h = (h ^ uint64(s.name[j])) * 1099511628211
		}
		// Real subreddit ids run from t5_6 (reddit.com) to six or seven
		// base-36 digits; most active ones have five.
		id := appendBase36([]byte("t5_"), 36*36*36*36+mix(h)%(36*36*36*36*35))
		out[i] = subreddit{name: s.name, lang: s.lang, id: string(id)}
	}
	return out
}
