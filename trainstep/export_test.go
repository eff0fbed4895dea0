package trainstep

// MixQuotas exposes mixQuotas to the external tests.
var MixQuotas = mixQuotas
