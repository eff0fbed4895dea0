package main

import (
	"fmt"
	"path/filepath"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/trainstep"
)

// topicContext loads the featurize model a checkpoint of a model with the
// topic context keeps (trainstep.DirFeaturize) and returns the function
// giving a tokenised text's topic vector, as featurize gave the training
// rows theirs. It is evalsink.Config.ContextFor.
func topicContext(checkpointDir string) (func(tokens []string) []float32, error) {
	m, err := featurize.LoadModel(filepath.Join(checkpointDir, trainstep.DirFeaturize))
	if err != nil {
		return nil, fmt.Errorf("the checkpoint's model takes the topic context: %w", err)
	}
	f := m.NewFeaturizer()
	return func(tokens []string) []float32 { return f.Topics(nil, tokens) }, nil
}
