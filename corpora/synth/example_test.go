package synth_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/parastream/parastream/corpora/synth"
)

func ExampleQuora() {
	synth.Quora(os.Stdout, synth.Config{Rows: 3, Seed: 1, MalformedRate: synth.NoMalformed})
	// Output:
	// id	qid1	qid2	question1	question2	is_duplicate
	// 0	1	2	Why do issues remain?	How come issues remain?	1
	// 1	3	4	How do I get better at C++?	How can I improve my C++?	1
	// 2	3	5	How do I get better at C++?	How do I get better at Java?	0
}

func ExampleEuroparl() {
	var en, fr strings.Builder
	st, _ := synth.Europarl(&en, &fr, synth.Config{Rows: 3, Seed: 1, MalformedRate: synth.NoMalformed})
	fmt.Print(en.String(), fr.String())
	fmt.Println(st.Rows, "pairs,", st.Bytes, "bytes")
	// Output:
	// (The sitting was closed at 4.00 p.m.)
	// The Commission would like to improve the proposal in all the Member States, and I must defend the budget for 2001.
	// The Council should respect the Treaty of Amsterdam at first reading.
	// (La séance est levée à 16h00)
	// La Commission voudrait améliorer la proposition dans tous les États membres, et je dois défendre le budget pour 2001.
	// Le Conseil devrait respecter le traité d'Amsterdam en première lecture.
	// 3 pairs, 450 bytes
}
