package shards

// ProgramVersion is stamped, the version the program was built as (the
// one `parastream --version` prints, which the command passes down), or,
// when that is "", the version its build info records (BuildInfo).
// Manifests, result rows and checkpoints record it.
func ProgramVersion(stamped string) string {
	if stamped != "" {
		return stamped
	}
	v, _ := BuildInfo()
	return v
}
