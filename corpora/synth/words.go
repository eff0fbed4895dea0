package synth

import "strings"

// The English vocabulary, by part of speech, each list in rough order of
// frequency: the generators draw from it with Zipf weights, so the first
// words of a list are the common ones. Inflections come from rules and the
// irregular tables below: some 3,500 distinct words in all.

var nounList = fields(`
time people way day thing man world life year hand part child eye woman place
work week case point government company number group problem fact game guy
money friend job question home car side kind head house service family power
end story city room school mother water night area name country book word
team reason issue music food thread post comment video picture price phone
idea state system program law health lot person player season guess mind moment
internet level rest wife girlfriend boyfriend husband dog cat movie show
character episode power door sense answer line body car plan month mistake
experience result change future past game server update patch bug feature
computer keyboard screen mouse laptop build card drive battery charger cable
store deal sale order package shipping refund account password email message
review rating score goal match league club coach fan ticket stadium season
war history army country border election vote party president senator
policy tax bill court judge lawyer police officer crime report source article
paper study research data evidence theory science doctor nurse hospital
patient medicine pain disease virus vaccine diet weight muscle workout gym
coffee beer wine pizza burger sandwich chicken beef rice bread cheese sauce
kitchen recipe oven knife table chair desk bed couch floor wall window roof
garden tree plant flower grass dirt rock river lake ocean beach mountain road
street bridge train bus plane flight airport hotel trip vacation holiday
weekend morning evening afternoon hour minute second year decade century
brother sister dad mom parent kid baby son daughter cousin uncle aunt
neighbor boss coworker manager client customer employee teacher student
class course degree college university exam test homework grade essay
language word sentence accent joke meme reference quote title subreddit
mod rule ban downvote upvote karma award sub username profile flair
song album band concert guitar drum piano singer artist painting photo
camera lens light color shape size style design model version edition
engine tire wheel brake oil gas mile speed lane highway truck bike helmet
fish bird horse cow pig sheep bear wolf fox deer duck snake bug spider
weather rain snow wind storm sun sky cloud heat cold summer winter spring fall
energy electricity solar panel heater fan air noise sound voice volume
tool hammer saw drill screw nail wood board glue paint brush finish stain
table shelf cabinet drawer frame joint cut edge corner surface grain
budget salary rent mortgage loan debt interest stock market fund share
crypto coin wallet exchange trade profit loss risk investment bank
energy climate carbon emission plastic waste recycling environment
cat dog puppy kitten pet vet leash collar toy treat
software code function variable error library framework database query
network router connection signal wifi cloud storage file folder backup
window linux mac browser app extension setting option menu button
boss raid dungeon quest loot weapon armor skill spell level map mission
player character class build meta nerf buff patch lobby match ranked
episode season finale trailer sequel remake franchise director actor scene
ending plot twist villain hero chapter volume author series novel
rule fine permit license insurance claim form office appointment
island village town capital region province county district coast valley
`)

// irregularPlural holds the plurals that the rules get wrong.
var irregularPlural = map[string]string{
	"man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet",
	"tooth": "teeth", "mouse": "mice", "life": "lives", "wife": "wives", "knife": "knives",
	"people": "people", "fish": "fish", "sheep": "sheep", "deer": "deer", "data": "data",
	"evidence": "evidence", "music": "music", "money": "money", "health": "health", "rice": "rice",
	"series": "series", "news": "news", "advice": "advice", "information": "information",
	"shelf": "shelves", "leaf": "leaves", "half": "halves", "thief": "thieves",
}

var verbList = fields(`
be have do say get make go know take see come think look want give use find
tell ask work seem feel try leave call need mean keep let begin help talk turn
start show hear play run move like live believe hold bring happen write provide
sit stand lose pay meet include continue set learn change lead understand
watch follow stop create speak read allow add spend grow open walk win offer
remember love consider appear buy wait serve die send expect build stay fall
cut reach kill remain suggest raise pass sell require report decide pull break
fix install update upgrade download delete post reply upvote downvote ban
cook eat drink sleep drive ride fly swim travel visit move rent hire quit
agree argue explain mention notice realize assume guess wonder hope wish
enjoy hate prefer miss forget forgive blame thank recommend suggest check
test compare choose pick replace return order ship cancel charge refund
save spend earn invest borrow lend owe afford waste count measure sand
stain paint glue clamp drill screw finish polish sharpen carve plane join
train lift stretch run walk jog rest recover heal hurt injure treat cure
vote elect protest support oppose debate discuss review approve reject
stream record edit upload share link copy paste search scroll browse click
`)

// irregularVerb holds past, past participle: the forms the rules get wrong.
var irregularVerb = map[string][2]string{
	"be": {"was", "been"}, "have": {"had", "had"}, "do": {"did", "done"}, "say": {"said", "said"},
	"get": {"got", "gotten"}, "make": {"made", "made"}, "go": {"went", "gone"}, "know": {"knew", "known"},
	"take": {"took", "taken"}, "see": {"saw", "seen"}, "come": {"came", "come"}, "think": {"thought", "thought"},
	"give": {"gave", "given"}, "find": {"found", "found"}, "tell": {"told", "told"}, "feel": {"felt", "felt"},
	"leave": {"left", "left"}, "mean": {"meant", "meant"}, "keep": {"kept", "kept"}, "let": {"let", "let"},
	"begin": {"began", "begun"}, "run": {"ran", "run"}, "hear": {"heard", "heard"}, "hold": {"held", "held"},
	"bring": {"brought", "brought"}, "write": {"wrote", "written"}, "sit": {"sat", "sat"},
	"stand": {"stood", "stood"}, "lose": {"lost", "lost"}, "pay": {"paid", "paid"}, "meet": {"met", "met"},
	"set": {"set", "set"}, "lead": {"led", "led"}, "understand": {"understood", "understood"},
	"speak": {"spoke", "spoken"}, "read": {"read", "read"}, "spend": {"spent", "spent"}, "grow": {"grew", "grown"},
	"win": {"won", "won"}, "buy": {"bought", "bought"}, "send": {"sent", "sent"}, "build": {"built", "built"},
	"fall": {"fell", "fallen"}, "cut": {"cut", "cut"}, "sell": {"sold", "sold"}, "break": {"broke", "broken"},
	"eat": {"ate", "eaten"}, "drink": {"drank", "drunk"}, "sleep": {"slept", "slept"}, "drive": {"drove", "driven"},
	"ride": {"rode", "ridden"}, "fly": {"flew", "flown"}, "swim": {"swam", "swum"}, "quit": {"quit", "quit"},
	"forget": {"forgot", "forgotten"}, "forgive": {"forgave", "forgiven"}, "choose": {"chose", "chosen"},
	"lend": {"lent", "lent"}, "hurt": {"hurt", "hurt"}, "put": {"put", "put"}, "become": {"became", "become"},
	"show": {"showed", "shown"}, "hide": {"hid", "hidden"}, "shoot": {"shot", "shot"}, "teach": {"taught", "taught"},
	"catch": {"caught", "caught"}, "fight": {"fought", "fought"}, "throw": {"threw", "thrown"},
}

var adjList = fields(`
good new first last long great little own other old right big high different
small large next early young important few public bad same able real sure
free full easy hard simple best better worse worst whole clear true false
cheap expensive nice fine cool weird funny stupid crazy amazing awesome
beautiful ugly pretty cute terrible horrible awful perfect decent solid
great huge tiny massive quick slow fast loud quiet dark bright light heavy
hot cold warm wet dry clean dirty fresh rotten safe dangerous strange
common rare popular famous unknown local national global political social
economic legal illegal medical mental physical personal private official
original actual basic main major minor entire final previous recent current
modern ancient future normal standard average typical specific general
obvious possible impossible likely unlikely necessary useful useless
interesting boring annoying exciting scary sad happy angry tired sick
serious honest fair unfair wrong correct accurate similar different
wooden metal plastic glass solid smooth rough sharp dull soft hard
red blue green yellow black white brown gray orange purple pink
stock custom broken busted used refurbished limited unlimited premium
competitive casual ranked toxic wholesome underrated overrated
`)

var advList = fields(`
just really also very still even actually probably definitely literally
always never often sometimes usually already almost maybe basically honestly
seriously totally completely pretty quite rather super too so quickly slowly
easily finally recently currently exactly simply clearly obviously apparently
especially generally absolutely certainly nearly barely hardly mostly mainly
`)

// properList holds names of things people talk about on Reddit.
var properList = fields(`
Google Apple Amazon Microsoft Reddit YouTube Netflix Tesla Steam Nintendo
Sony Xbox PlayStation Windows Linux Android iPhone Samsung Spotify Twitter
Facebook Instagram TikTok Discord Twitch Walmart Costco Target IKEA Lego
Texas California Florida Ohio Canada Mexico Europe Germany France Japan
China Russia India Brazil Australia London Paris Berlin Tokyo Chicago
Seattle Boston Toronto Vancouver Minecraft Fortnite Skyrim Zelda Pokemon
Destiny Elden Diablo Halo Marvel Disney Batman Superman Star Wars Trek
Biden Trump Obama NASA NATO FBI IRS EU UN NFL NBA MLB NHL FIFA UFC
`)

var nameList = fields(`
James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth
David Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen
Daniel Nancy Matthew Lisa Anthony Betty Mark Helen Paul Sandra Steven Donna
Andrew Carol Kevin Ruth Brian Sharon George Michelle Edward Laura Ronald
`)

// slangList holds short reactions, each a whole comment.
var reactionList = []string{
	"This.", "lol", "LOL", "lmao", "Same.", "Thanks!", "Thank you!", "Agreed.", "Nice!", "Wow.",
	"Underrated comment", "Came here to say this", "Username checks out", "Source?",
	"Found the American", "F", "RIP", "Big if true", "Can confirm.", "This is the way.",
	"Take my upvote", "Happy cake day!", "Nope.", "Yep.", "Exactly.", "100% this",
	"Oof", "Damn.", "Bruh", "Sauce?", "What?", "Huh?", "ok", "Yes", "No.", "Good bot",
	"Bad bot", "Instructions unclear", "r/nocontext", "I'm dead 😂", "Same here", "Me too",
	"Beautiful work", "Love it", "So cute!", "Congrats!", "Well said.", "Context?",
}

// fields splits a word list on white space.
func fields(s string) []string { return strings.Fields(s) }

// plural returns the plural of a noun.
func plural(n string) string {
	if p, ok := irregularPlural[n]; ok {
		return p
	}
	switch {
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "x"), strings.HasSuffix(n, "ch"), strings.HasSuffix(n, "sh"):
		return n + "es"
	case strings.HasSuffix(n, "y") && len(n) > 1 && !isVowel(n[len(n)-2]):
		return n[:len(n)-1] + "ies"
	}
	return n + "s"
}

// verbForms returns the 3rd person singular, past, past participle and
// -ing forms of a verb.
func verbForms(v string) (s, past, pp, ing string) {
	switch v {
	case "be":
		return "is", "was", "been", "being"
	case "have":
		return "has", "had", "had", "having"
	case "do":
		return "does", "did", "done", "doing"
	case "go":
		return "goes", "went", "gone", "going"
	}
	n := len(v)
	switch {
	case strings.HasSuffix(v, "s"), strings.HasSuffix(v, "x"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "z"):
		s = v + "es"
	case strings.HasSuffix(v, "y") && !isVowel(v[n-2]):
		s = v[:n-1] + "ies"
	default:
		s = v + "s"
	}
	double := n >= 3 && !isVowel(v[n-1]) && isVowel(v[n-2]) && !isVowel(v[n-3]) &&
		v[n-1] != 'w' && v[n-1] != 'x' && v[n-1] != 'y' && n <= 4
	switch {
	case strings.HasSuffix(v, "ie"):
		ing = v[:n-2] + "ying"
	case strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "ee"):
		ing = v[:n-1] + "ing"
	case double:
		ing = v + v[n-1:] + "ing"
	default:
		ing = v + "ing"
	}
	if irr, ok := irregularVerb[v]; ok {
		return s, irr[0], irr[1], ing
	}
	switch {
	case strings.HasSuffix(v, "e"):
		past = v + "d"
	case strings.HasSuffix(v, "y") && !isVowel(v[n-2]):
		past = v[:n-1] + "ied"
	case double:
		past = v + v[n-1:] + "ed"
	default:
		past = v + "ed"
	}
	return s, past, past, ing
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

// Text in other languages, for the share of non-English comments.
var (
	frenchSentences = []string{
		"Je suis complètement d'accord avec toi.", "C'est exactement ce que je pensais.",
		"Franchement, ça ne m'étonne pas du tout.", "Quelqu'un sait où trouver ça en France ?",
		"Il faut arrêter de dire n'importe quoi.", "Le problème, c'est que personne ne veut payer.",
		"On en parlait justement hier avec des amis.", "Ça dépend vraiment de la région.",
		"Merci pour l'info, je ne savais pas.", "Le prix a encore augmenté cette année.",
		"C'est pas faux.", "J'ai vécu à Lyon pendant cinq ans et c'était génial.",
		"La SNCF est encore en grève, évidemment.", "Tu devrais essayer la version originale.",
		"Honnêtement je préfère l'ancienne interface.", "Bon courage pour la suite !",
		"Quel est le rapport avec le sujet ?", "Ça fait plaisir de voir ça.",
	}
	germanSentences = []string{
		"Das sehe ich genauso.", "Ich glaube nicht, dass das so einfach ist.",
		"Bei uns in Bayern ist das ganz anders.", "Hat jemand Erfahrung mit diesem Anbieter?",
		"Die Bahn ist mal wieder zu spät.", "Das ist doch völlig übertrieben.",
		"Danke für den Hinweis, wusste ich nicht.", "Meiner Meinung nach liegt das Problem woanders.",
		"Früher war das Bier günstiger.", "Genau deswegen habe ich gekündigt.",
		"Schöne Grüße aus Österreich!", "Warum muss das immer so kompliziert sein?",
		"Ich würde erstmal abwarten.", "Das Wetter hier ist schon seit Wochen furchtbar.",
		"Klingt nach einem typischen Montag.", "Gibt es dazu eine Quelle?",
	}
	japaneseSentences = []string{
		"これは本当にすごいですね。", "日本では普通のことだと思います。", "私も同じ経験があります。",
		"ありがとうございます！", "どこで買えますか？", "値段が高すぎると思う。",
		"昨日のニュースを見ましたか？", "めっちゃ面白いｗ", "それな", "東京はもう桜が咲いています。",
		"仕事が忙しくて全然時間がない。", "このゲームは最高です。", "なるほど、勉強になります。",
		"草", "確かにそうですね。", "週末は雨らしいよ。",
	}
	russianSentences = []string{
		"Полностью согласен с тобой.", "А где это можно купить?", "Спасибо, очень полезная информация.",
		"У нас в Москве такого нет.", "Это просто невероятно.", "Не знаю, мне кажется, это фейк.",
		"Цены опять выросли.", "Лучше бы они починили дороги.", "Классика жанра.",
		"Интересно, сколько это стоит?", "Я тоже так думал раньше.", "Без комментариев.",
		"Смотрел вчера, очень понравилось.", "Зачем так сложно?", "Всё как всегда.",
	}
	emojiList = []string{"😂", "🤣", "😭", "🙏", "❤️", "👀", "🔥", "💀", "👍", "😅", "🤔", "😍", "🙄", "💯", "🎉", "😊", "🥲", "👏"}
)
