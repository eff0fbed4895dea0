package synth

import "strings"

// The English vocabulary, by part of speech, each list in rough order of
// frequency: the generators draw from it with Zipf weights, so the first
// words of a list are the common ones. Inflections come from rules and the
// irregular tables below: about 2,200 lemmas and 4,900 word forms.

const nounWords = `
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
apartment building office factory farm field forest desert jungle swamp cave
hill cliff canyon harbor port dock ship boat yacht canoe sail anchor wave tide
sand stone brick concrete steel iron copper gold silver diamond crystal glass
leather cotton wool silk fabric thread button zipper pocket sleeve collar boot
shoe sock glove hat scarf jacket coat shirt dress skirt suit uniform costume
necklace ring bracelet watch wallet purse backpack suitcase bag box crate bottle
jar can cup mug glass plate bowl spoon fork pan pot kettle blender toaster fridge
freezer microwave dishwasher sink faucet pipe drain toilet shower bathtub towel
soap shampoo toothbrush mirror lamp bulb switch outlet wire fuse circuit panel
ceiling staircase hallway basement attic garage driveway fence gate yard porch
balcony terrace pool fountain statue monument museum gallery library theater
cinema arena church temple mosque castle palace tower prison factory warehouse
restaurant cafe bar pub bakery butcher grocery pharmacy clinic dentist surgeon
therapist counselor psychologist scientist engineer architect mechanic plumber
electrician carpenter painter farmer fisherman pilot sailor soldier general
captain sergeant detective spy thief criminal victim witness suspect prisoner
guard lawyer attorney jury verdict sentence trial lawsuit contract agreement
treaty alliance enemy ally rival opponent champion winner loser referee umpire
tournament playoff final semifinal quarter half inning overtime penalty foul
goalkeeper striker defender midfielder quarterback pitcher catcher batter
racket bat ball net hoop puck glove helmet jersey trophy medal prize reward
bonus raise promotion resume interview application deadline schedule calendar
agenda meeting conference seminar workshop lecture presentation slide chart
graph table spreadsheet document draft copy print scan signature stamp envelope
letter postcard parcel delivery courier driver passenger commuter tourist guide
map compass route direction distance journey voyage adventure expedition
mystery secret clue puzzle riddle answer solution method strategy tactic
approach technique process procedure step stage phase cycle pattern trend
habit routine tradition custom culture society community population generation
youth adult senior teenager toddler infant grandparent grandmother grandfather
nephew niece twin stranger roommate landlord tenant owner seller buyer dealer
vendor supplier partner investor founder startup corporation industry sector
economy inflation recession unemployment wage income revenue expense cost
discount coupon receipt invoice bill fee fine charge penalty tip donation
charity volunteer organization foundation institute agency department ministry
minister governor mayor council parliament congress senate committee campaign
candidate voter ballot poll survey census statistic percentage average total
amount quantity volume mass density pressure temperature degree inch foot
yard meter kilometer gallon liter pound ounce gram dozen hundred thousand million
billion fraction decimal equation formula calculation algorithm proof logic
philosophy religion belief faith prayer soul spirit ghost angel devil monster
dragon wizard witch magic spell potion curse legend myth fairy tale fable poem
verse lyric rhythm melody harmony chord note tune beat tempo genre playlist
podcast channel streamer subscriber follower viewer audience crowd fanbase
celebrity influencer actress comedian musician drummer guitarist rapper producer
studio label contract tour festival venue stage backstage microphone speaker
headphone amplifier pedal string key lens tripod drone satellite rocket planet
moon star galaxy universe orbit telescope astronaut alien robot machine device
gadget sensor chip processor memory disk monitor printer scanner projector
`

// irregularPlural returns the plural of n when the rules get it wrong.
func irregularPlural(n string) (string, bool) {
	switch n {
	case "man":
		return "men", true
	case "woman":
		return "women", true
	case "child":
		return "children", true
	case "person":
		return "people", true
	case "foot":
		return "feet", true
	case "tooth":
		return "teeth", true
	case "mouse":
		return "mice", true
	case "life":
		return "lives", true
	case "wife":
		return "wives", true
	case "knife":
		return "knives", true
	case "people":
		return "people", true
	case "fish":
		return "fish", true
	case "sheep":
		return "sheep", true
	case "deer":
		return "deer", true
	case "data":
		return "data", true
	case "evidence":
		return "evidence", true
	case "music":
		return "music", true
	case "money":
		return "money", true
	case "health":
		return "health", true
	case "rice":
		return "rice", true
	case "series":
		return "series", true
	case "news":
		return "news", true
	case "advice":
		return "advice", true
	case "information":
		return "information", true
	case "shelf":
		return "shelves", true
	case "leaf":
		return "leaves", true
	case "half":
		return "halves", true
	case "thief":
		return "thieves", true
	}
	return "", false
}

const verbWords = `
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
accept achieve acquire adapt adjust admire admit adopt advise afford aim
alert announce annoy apologize appreciate approach arrange arrest arrive
attach attack attempt attend attract avoid bake balance bath battle beg behave
belong bet bind bite bleed bless blink blow boil bomb book borrow bounce bow
brush bury calculate camp carry celebrate challenge chase chat cheat cheer chew
claim clap clean clear climb close coach collect comment communicate complain
complete concentrate concern confess confirm confuse connect contain convert
convince copy correct cough crash crawl cross crush cry cure cycle damage dance
dare deal declare decorate defend deliver deny depend describe deserve design
destroy detect develop dig disappear discover dislike divide double doubt drag
drain draw dress drop dry dust educate embarrass employ empty encourage end
enter entertain escape examine excite excuse exercise exist expand explode
explore express extend face fail fear feed fetch fight fill film fire fit flash
float flood flow fold force form frame frighten gather glow grab greet grin
grip guard guide hammer hand handle hang harm head heat hug hunt hurry identify
ignore imagine impress improve increase influence inform inject insist inspire
intend interrupt introduce invent invite iron itch jam joke judge juggle jump
kick kiss kneel knit knock label land last laugh launch lay lie lick lift light
limit list listen load lock log manage mark marry match matter melt mind mix
moan mourn murder nail name nod note obey object observe obtain occur offend
operate organize own pack paddle park part pause peel perform permit phone
place plan plant please plug point poke pop possess pour practice pray preach
precede prepare present preserve press pretend prevent print process produce
promise protect provide publish punch punish push question race rain raise
reach react realize receive reduce reflect refuse regret reign relax release
rely remain remind remove repair repeat request rescue resist respect respond
retire reveal rhyme rinse risk rob rock roll rot rub ruin rule rush sail satisfy
scare scatter scream screw scrub seal search separate settle shake shape share
shave shelter shiver shock shop shout shrug sigh sign signal sin sink ski skip
slap slide slip smash smell smile smoke snatch sneeze snore snow soak solve sort
spark spell spill spoil spot spray sprout squash squeak squeeze stamp stare
steer step stir store strap strengthen stretch strip stuff subtract succeed
suck suffer suit supply surprise surround suspect suspend swap switch tame tap
taste tease telephone tempt terrify thaw tick tickle tie time tip tire touch
tour tow trace trade transport trap tremble trick trip trot trouble trust
type unite unlock unpack vanish wander warm warn wash waste wave weigh welcome
whip whisper whistle wink wipe wobble wonder worry wrap wreck wrestle yawn yell
zip zoom
`

// irregularVerb returns the past and past participle of v when the rules
// get them wrong.
func irregularVerb(v string) ([2]string, bool) {
	switch v {
	case "be":
		return [2]string{"was", "been"}, true
	case "have":
		return [2]string{"had", "had"}, true
	case "do":
		return [2]string{"did", "done"}, true
	case "say":
		return [2]string{"said", "said"}, true
	case "get":
		return [2]string{"got", "gotten"}, true
	case "make":
		return [2]string{"made", "made"}, true
	case "go":
		return [2]string{"went", "gone"}, true
	case "know":
		return [2]string{"knew", "known"}, true
	case "take":
		return [2]string{"took", "taken"}, true
	case "see":
		return [2]string{"saw", "seen"}, true
	case "come":
		return [2]string{"came", "come"}, true
	case "think":
		return [2]string{"thought", "thought"}, true
	case "give":
		return [2]string{"gave", "given"}, true
	case "find":
		return [2]string{"found", "found"}, true
	case "tell":
		return [2]string{"told", "told"}, true
	case "feel":
		return [2]string{"felt", "felt"}, true
	case "leave":
		return [2]string{"left", "left"}, true
	case "mean":
		return [2]string{"meant", "meant"}, true
	case "keep":
		return [2]string{"kept", "kept"}, true
	case "let":
		return [2]string{"let", "let"}, true
	case "begin":
		return [2]string{"began", "begun"}, true
	case "run":
		return [2]string{"ran", "run"}, true
	case "hear":
		return [2]string{"heard", "heard"}, true
	case "hold":
		return [2]string{"held", "held"}, true
	case "bring":
		return [2]string{"brought", "brought"}, true
	case "write":
		return [2]string{"wrote", "written"}, true
	case "sit":
		return [2]string{"sat", "sat"}, true
	case "stand":
		return [2]string{"stood", "stood"}, true
	case "lose":
		return [2]string{"lost", "lost"}, true
	case "pay":
		return [2]string{"paid", "paid"}, true
	case "meet":
		return [2]string{"met", "met"}, true
	case "set":
		return [2]string{"set", "set"}, true
	case "lead":
		return [2]string{"led", "led"}, true
	case "understand":
		return [2]string{"understood", "understood"}, true
	case "speak":
		return [2]string{"spoke", "spoken"}, true
	case "read":
		return [2]string{"read", "read"}, true
	case "spend":
		return [2]string{"spent", "spent"}, true
	case "grow":
		return [2]string{"grew", "grown"}, true
	case "win":
		return [2]string{"won", "won"}, true
	case "buy":
		return [2]string{"bought", "bought"}, true
	case "send":
		return [2]string{"sent", "sent"}, true
	case "build":
		return [2]string{"built", "built"}, true
	case "fall":
		return [2]string{"fell", "fallen"}, true
	case "cut":
		return [2]string{"cut", "cut"}, true
	case "sell":
		return [2]string{"sold", "sold"}, true
	case "break":
		return [2]string{"broke", "broken"}, true
	case "eat":
		return [2]string{"ate", "eaten"}, true
	case "drink":
		return [2]string{"drank", "drunk"}, true
	case "sleep":
		return [2]string{"slept", "slept"}, true
	case "drive":
		return [2]string{"drove", "driven"}, true
	case "ride":
		return [2]string{"rode", "ridden"}, true
	case "fly":
		return [2]string{"flew", "flown"}, true
	case "swim":
		return [2]string{"swam", "swum"}, true
	case "quit":
		return [2]string{"quit", "quit"}, true
	case "forget":
		return [2]string{"forgot", "forgotten"}, true
	case "forgive":
		return [2]string{"forgave", "forgiven"}, true
	case "choose":
		return [2]string{"chose", "chosen"}, true
	case "lend":
		return [2]string{"lent", "lent"}, true
	case "hurt":
		return [2]string{"hurt", "hurt"}, true
	case "put":
		return [2]string{"put", "put"}, true
	case "become":
		return [2]string{"became", "become"}, true
	case "show":
		return [2]string{"showed", "shown"}, true
	case "hide":
		return [2]string{"hid", "hidden"}, true
	case "shoot":
		return [2]string{"shot", "shot"}, true
	case "teach":
		return [2]string{"taught", "taught"}, true
	case "catch":
		return [2]string{"caught", "caught"}, true
	case "fight":
		return [2]string{"fought", "fought"}, true
	case "throw":
		return [2]string{"threw", "thrown"}, true
	case "bind":
		return [2]string{"bound", "bound"}, true
	case "bite":
		return [2]string{"bit", "bitten"}, true
	case "bleed":
		return [2]string{"bled", "bled"}, true
	case "blow":
		return [2]string{"blew", "blown"}, true
	case "dig":
		return [2]string{"dug", "dug"}, true
	case "draw":
		return [2]string{"drew", "drawn"}, true
	case "feed":
		return [2]string{"fed", "fed"}, true
	case "hang":
		return [2]string{"hung", "hung"}, true
	case "lay":
		return [2]string{"laid", "laid"}, true
	case "lie":
		return [2]string{"lay", "lain"}, true
	case "shake":
		return [2]string{"shook", "shaken"}, true
	case "sink":
		return [2]string{"sank", "sunk"}, true
	case "slide":
		return [2]string{"slid", "slid"}, true
	case "bet":
		return [2]string{"bet", "bet"}, true
	case "light":
		return [2]string{"lit", "lit"}, true
	case "deal":
		return [2]string{"dealt", "dealt"}, true
	case "bend":
		return [2]string{"bent", "bent"}, true
	case "wake":
		return [2]string{"woke", "woken"}, true
	}
	return [2]string{}, false
}

// doubling reports verbs longer than four letters, or starting with a
// vowel, whose final consonant doubles (preferred, admitted).
func doubling(v string) bool {
	switch v {
	case "prefer", "occur", "admit", "commit", "control", "permit", "regret", "quit", "upset", "equip", "refer", "omit":
		return true
	}
	return false
}

const adjWords = `
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
abundant adorable adventurous aggressive alert alive ambitious ancient anxious
arrogant ashamed attractive awkward bitter bizarre blank bold brave brief
brilliant bumpy calm capable careful careless cautious charming cheerful chilly
chubby clever clumsy cloudy colorful comfortable confident confused conscious
cooperative courageous creepy crispy crowded cruel curious curly cynical damp
deep defiant delicate delicious delightful dense dependable depressed desperate
determined difficult dizzy eager elegant embarrassed empty enchanting energetic
enormous enthusiastic envious evil excited expensive exuberant faithful famous
fancy fantastic fearless fierce filthy flaky fluffy foolish fragile frantic
friendly frightened frozen fuzzy gentle gigantic glamorous gleaming glorious
gorgeous graceful greasy greedy grumpy guilty handsome harsh healthy helpful
helpless hilarious hollow homeless hungry icy ideal ill immense impatient
innocent inquisitive itchy jealous jittery jolly joyous juicy kind lazy lively
lonely loose lovely lucky magnificent mammoth marvelous mature messy mighty
miniature misty modest moody motionless muddy mushy mysterious naive narrow
nasty naughty nervous noisy numerous obedient odd outrageous outstanding
panicky peaceful perfect plain pleasant plump polite poor powerful precious
prickly proud puzzled quaint rapid reckless relieved repulsive responsible
rich rigid ripe robust rude salty scrawny selfish shaggy shallow shiny short
shy silly skinny sleepy slimy slippery smoggy snobbish sore sparkling spicy
splendid spotless square steady steep sticky stormy straight stubborn sturdy
successful super sweet swift talented tame tasty tender tense terrific thankful
thick thirsty thoughtful tight tough troubled ugliest uneven unsightly upset
uptight vast victorious vivacious wandering weak weary whimsical wicked wide
wild witty wonderful worried wrong zany zealous
`

const advWords = `
just really also very still even actually probably definitely literally
always never often sometimes usually already almost maybe basically honestly
seriously totally completely pretty quite rather super too so quickly slowly
easily finally recently currently exactly simply clearly obviously apparently
especially generally absolutely certainly nearly barely hardly mostly mainly
instead anyway otherwise therefore however meanwhile eventually suddenly
immediately constantly gradually rarely seldom occasionally frequently
regularly perfectly badly poorly nicely kindly gently carefully carelessly
loudly quietly happily sadly angrily eagerly proudly openly secretly truly
fairly deeply highly widely hugely slightly
`

// properWords holds names of things people talk about on Reddit.
const properWords = `
Google Apple Amazon Microsoft Reddit YouTube Netflix Tesla Steam Nintendo
Sony Xbox PlayStation Windows Linux Android iPhone Samsung Spotify Twitter
Facebook Instagram TikTok Discord Twitch Walmart Costco Target IKEA Lego
Texas California Florida Ohio Canada Mexico Europe Germany France Japan
China Russia India Brazil Australia London Paris Berlin Tokyo Chicago
Seattle Boston Toronto Vancouver Minecraft Fortnite Skyrim Zelda Pokemon
Destiny Elden Diablo Halo Marvel Disney Batman Superman Star Wars Trek
Biden Trump Obama NASA NATO FBI IRS EU UN NFL NBA MLB NHL FIFA UFC
`

const nameWords = `
James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth
David Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen
Daniel Nancy Matthew Lisa Anthony Betty Mark Helen Paul Sandra Steven Donna
Andrew Carol Kevin Ruth Brian Sharon George Michelle Edward Laura Ronald
`

// reactionList returns short reactions, each a whole comment.
func reactionList() []string {
	return []string{
		"This.", "lol", "LOL", "lmao", "Same.", "Thanks!", "Thank you!", "Agreed.", "Nice!", "Wow.",
		"Underrated comment", "Came here to say this", "Username checks out", "Source?",
		"Found the American", "F", "RIP", "Big if true", "Can confirm.", "This is the way.",
		"Take my upvote", "Happy cake day!", "Nope.", "Yep.", "Exactly.", "100% this",
		"Oof", "Damn.", "Bruh", "Sauce?", "What?", "Huh?", "ok", "Yes", "No.", "Good bot",
		"Bad bot", "Instructions unclear", "r/nocontext", "I'm dead 😂", "Same here", "Me too",
		"Beautiful work", "Love it", "So cute!", "Congrats!", "Well said.", "Context?",
	}
}

// fields splits a word list on white space.
func fields(s string) []string { return strings.Fields(s) }

// plural returns the plural of a noun.
func plural(n string) string {
	if p, ok := irregularPlural(n); ok {
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
	// A final consonant after a single vowel doubles in short verbs
	// (stop, plan) and in some stressed on the last syllable (prefer).
	cvc := n >= 3 && !isVowel(v[n-1]) && isVowel(v[n-2]) && !isVowel(v[n-3]) &&
		v[n-1] != 'w' && v[n-1] != 'x' && v[n-1] != 'y'
	double := doubling(v) || cvc && (n == 3 || n == 4 && !isVowel(v[0]))
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
	if irr, ok := irregularVerb(v); ok {
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

func frenchSentences() []string {
	return []string{
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
}

func germanSentences() []string {
	return []string{
		"Das sehe ich genauso.", "Ich glaube nicht, dass das so einfach ist.",
		"Bei uns in Bayern ist das ganz anders.", "Hat jemand Erfahrung mit diesem Anbieter?",
		"Die Bahn ist mal wieder zu spät.", "Das ist doch völlig übertrieben.",
		"Danke für den Hinweis, wusste ich nicht.", "Meiner Meinung nach liegt das Problem woanders.",
		"Früher war das Bier günstiger.", "Genau deswegen habe ich gekündigt.",
		"Schöne Grüße aus Österreich!", "Warum muss das immer so kompliziert sein?",
		"Ich würde erstmal abwarten.", "Das Wetter hier ist schon seit Wochen furchtbar.",
		"Klingt nach einem typischen Montag.", "Gibt es dazu eine Quelle?",
	}
}

func japaneseSentences() []string {
	return []string{
		"これは本当にすごいですね。", "日本では普通のことだと思います。", "私も同じ経験があります。",
		"ありがとうございます！", "どこで買えますか？", "値段が高すぎると思う。",
		"昨日のニュースを見ましたか？", "めっちゃ面白いｗ", "それな", "東京はもう桜が咲いています。",
		"仕事が忙しくて全然時間がない。", "このゲームは最高です。", "なるほど、勉強になります。",
		"草", "確かにそうですね。", "週末は雨らしいよ。",
	}
}

func russianSentences() []string {
	return []string{
		"Полностью согласен с тобой.", "А где это можно купить?", "Спасибо, очень полезная информация.",
		"У нас в Москве такого нет.", "Это просто невероятно.", "Не знаю, мне кажется, это фейк.",
		"Цены опять выросли.", "Лучше бы они починили дороги.", "Классика жанра.",
		"Интересно, сколько это стоит?", "Я тоже так думал раньше.", "Без комментариев.",
		"Смотрел вчера, очень понравилось.", "Зачем так сложно?", "Всё как всегда.",
	}
}

func emojiList() []string {
	return []string{"😂", "🤣", "😭", "🙏", "❤️", "👀", "🔥", "💀", "👍", "😅", "🤔", "😍", "🙄", "💯", "🎉", "😊", "🥲", "👏"}
}
