package trainstep

import (
	"fmt"
	"slices"

	"github.com/parastream/parastream/trainstep/compute"
)

// WarmStart replaces the trainer's parameters with those of the checkpoint
// dir that have the same name and shape (another run's: a pretraining
// phase, as the csae's reconstruction before a pair loss), and returns
// their names. The rest keep their initial values; the optimiser state
// starts afresh. It refuses a checkpoint of another vocabulary (its ids
// would name other words), one that shares no parameter, a trainer that has
// stepped, and a model with lambda_w (whose pull back to the initial
// embeddings was fixed when the model was built).
func (t *Trainer) WarmStart(dir string) ([]string, error) {
	if t.step > 0 {
		return nil, fmt.Errorf("warm start from %s: the trainer has taken %d steps; warm start a new one", dir, t.step)
	}
	if t.cfg.LambdaW > 0 {
		return nil, fmt.Errorf("warm start from %s: lambda_w %g pulls the embeddings back to their random start: train without it", dir, t.cfg.LambdaW)
	}
	ck, err := ReadCheckpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("warm start: %w", err)
	}
	if ck.Config.Vocab != t.cfg.Vocab || (t.vocab != nil && ck.Vocab != nil && !slices.Equal(ck.Vocab, t.vocab)) {
		return nil, fmt.Errorf("warm start from %s: its vocabulary (%d rows) is not this run's (%d rows): train on data featurized with the same model", dir, ck.Config.Vocab, t.cfg.Vocab)
	}
	shapes := map[string][]int{}
	for _, p := range compute.Layout(t.cfg) {
		shapes[p.Name] = p.Shape
	}
	var take []compute.Tensor
	var names []string
	for _, p := range ck.Params {
		if s, ok := shapes[p.Name]; ok && compute.SameShape(s, p.Shape) {
			take, names = append(take, p), append(names, p.Name)
		}
	}
	if len(take) == 0 {
		return nil, fmt.Errorf("warm start from %s: no parameter of its %s model has a name and shape of this %s model", dir, ck.Config.Encoder, t.cfg.Encoder)
	}
	if err := t.model.SetParams(take); err != nil {
		return nil, fmt.Errorf("warm start from %s: %w", dir, err)
	}
	return names, nil
}
