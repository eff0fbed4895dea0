package shards

import "strings"

// IsWorkDirName reports whether name is that of a work directory
// Output.WorkDir made: WorkPrefix, the run's name, a dash and 12 hex
// digits. That name is the mark of a parastream run's own: a user's
// .work-something beside an output is not one, and no cleanup removes it.
func IsWorkDirName(name string) bool {
	rest, ok := strings.CutPrefix(name, WorkPrefix)
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 1 || len(rest)-i-1 != 12 {
		return false
	}
	return strings.Trim(rest[i+1:], "0123456789abcdef") == ""
}
