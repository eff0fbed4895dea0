package spill

// WellKnownMetaKeys are the Meta keys the codec writes as one byte, in
// their order (spillMetaKey).
func WellKnownMetaKeys() []string {
	keys := make([]string, spillMetaKeyCount)
	for i := range keys {
		keys[i] = spillMetaKey(i)
	}
	return keys
}
