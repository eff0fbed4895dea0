package beamfn

// CounterNamespace is the namespace of every Beam counter the project's
// DoFns report (transforms' and featurize's), and the one whose committed
// values pipelines reads back. It sits here, in the Beam helper both of
// those packages import, so that featurize need not import transforms.
const CounterNamespace = "parastream"
