package sample

// Test files are not checked.
var testTable = []int{1, 2, 3}

func helper(a, b, c, d, e, f, g int) {}
