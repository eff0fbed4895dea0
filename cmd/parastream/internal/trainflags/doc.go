// Package trainflags is the command line of `parastream train`: its flags,
// declared into one trainstep.RunConfig and a device.Config (Declare), the
// help's groups, and the resume policy, which says what `train --resume`
// does with each flag the run was started with (run.json's flags).
package trainflags
