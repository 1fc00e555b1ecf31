package cli

// MergedWeightsFigure is mergedWeightsFigure, for the figure tests of
// package cli_test.
var MergedWeightsFigure = mergedWeightsFigure
