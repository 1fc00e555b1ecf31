package output

// The arrays of the outputs, by name. Shapes are in C order; S is the
// number of output times, k of drops observed, H of heads, R the rank of a
// head's key and query, D the dimension, n the state size. Times are t/τ,
// states are in the original basis of Λ, and a loss is the population loss
// L (docs/math.md, "The loss") unless said otherwise. All arrays are
// float64 unless marked int (int64) or bool.

// Arrays of a run (linattn run, layout.Run), and of the flow part of a
// training run (linattn train).
const (
	Times        = "t"             // (S,) output times t/τ
	Loss         = "loss"          // (S,) the loss at each (train: the training loss L̂)
	Values       = "v"             // (S, H) value weights; a stack of L untied layers has a layer axis after S here and in K, Q, U, key_alignment and M
	Keys         = "K"             // (S, H, R, D) keys (separate model)
	Queries      = "Q"             // (S, H, R, D) queries (separate model)
	KeyQuery     = "U"             // (S, H, D, D) merged key–query matrices (merged model)
	KeyAlignment = "key_alignment" // (S, H, R, D) |⟨k, e_d⟩|/‖k‖ of each key with each eigenvector (separate)
	Map          = "M"             // (S, D, D) the effective map: ŷ = βᵀ M x_q (full layer: the part of ŷ through β)
	Transitions  = "transitions"   // (k,) observed drop times t_m (a sweep index: (runs, D), padded with −1)
	TransitionM  = "transition_m"  // (k,) int: the m of each drop
	// StateTimes are the times of the states (S', the first dimension of
	// v, K, Q, U, key_alignment, M and the extra blocks) in a run that
	// keeps at most every K-th of them (linattn run -state-every K): times
	// of the run's steps, from 0 to the end, or (a run integrated twice)
	// every K-th of t and the last; absent when they are at every t.
	StateTimes = "state_t"
	// LossClosedForm is the merged model's closed-form loss with white Λ
	// at the output times (S,), paper eq. attnM-solution, s₀ = ‖v(0)‖²:
	// exact from a balanced, aligned start (docs/math.md, "Closed form for
	// the merged model"). Written by run and reduced for merged runs with
	// white Λ.
	LossClosedForm = "loss_closed_form"
)

// Arrays of the task, in every output but a sweep index (layout.Law).
const (
	Covariance = "Lambda"   // (D, D) the covariance Λ of the tokens
	Eigvals    = "eigvals"  // (D,) its eigenvalues λ_d, decreasing
	Eigvecs    = "eigvecs"  // (D, D) its eigenvectors: column d is e_d
	Plateaus   = "plateaus" // (D+1,) the plateau levels L(M_m), m = 0..D
)

// Arrays of a run of the full layer or under fixed tasks (linattn run
// -layer full, -icl C < 1), and of a training run.
const (
	ValueX   = "v_x"      // (S, H, D) the token part of each head's value row (-layer full)
	LabelKQ  = "u_y"      // (S, H, D) the label row of each W^KQ's first D columns (merged, -layer full)
	KeyLabel = "k_y"      // (S, H, R) each key's label entry (separate, -layer full)
	TestICL  = "test_icl" // (S,) the in-context test loss (run: exact; train: on -test sequences)
	TestIWL  = "test_iwl" // (S,) the in-weight test loss (likewise)
	TestIDG  = "test_idg" // (S,) the in-distribution test loss: a fixed task labels context and query (run: exact)
	Tasks    = "w0"       // (K, D) the fixed task vectors, original basis
)

// Arrays of a training run (linattn train) besides those of a run.
const (
	Step     = "step"      // (S,) int: the gradient-descent step of each sample (not with -gd=false)
	FlowLoss = "flow_loss" // (S,) the population flow's loss from the same weights at the same times
	// TransformerValue and TransformerKeyQuery are the weights of the
	// unrestricted transformer (linattn train -unrestricted), W^V and W^KQ
	// of every layer and head, (S, L, H, D+1, D+1) each; GDForm (S, L) is
	// the part of each layer's squared weights in the blocks of the stack
	// of gradient-descent layers: W^V's label–label entry and W^KQ's
	// token–token block. Its flow_loss is the stack's, from the paper's
	// start.
	TransformerValue    = "W_V"
	TransformerKeyQuery = "W_KQ"
	GDForm              = "gd_form"
	// FlowTestICL, FlowTestIWL and FlowTestIDG are the population flow's
	// exact test losses at the same times (a layer with extra blocks or a
	// law other than the paper's; the last with fixed tasks).
	FlowTestICL = "flow_test_icl" // (S,)
	FlowTestIWL = "flow_test_iwl" // (S,)
	FlowTestIDG = "flow_test_idg" // (S,)
	// Compare has one row per plateau m = 0..D, columns CompareColumns.
	Compare = "compare" // (D+1, 6)
)

// CompareColumns name the columns of Compare: m, L(M_m), the plateau
// observed in training and in the flow, the drop time t_m in training and
// in the flow (−1 where there is none).
func CompareColumns() []string {
	return []string{"m", "L(M_m)", "plateau_train", "plateau_flow", "t_train", "t_flow"}
}

// Arrays of linattn reduced: per plateau m = 0..D−1 of the separate model,
// per drop, and the comparison curves (docs/math.md, "The reduced
// theory"); for the merged model the drop-time estimates and the loss.
const (
	PlateauLevel        = "level"                          // (D,) L(M_m)
	AnsatzA             = "a"                              // (D,) a_m of τ v' = λ²v² − λ a v⁵ (paper eq. 1Ddynamics)
	VStar               = "v_star"                         // (D,) v* = (λ/a)^{1/3}
	Drop                = "drop"                           // (k,) int: the drop m
	DropHead            = "head"                           // (k,) int: the head that learns e_m
	TObserved           = "t_observed"                     // (k,) the observed drop time
	TPredicted          = "t_predicted"                    // (k,) the 1-D theory's, from where the head is aligned
	TAligned            = "t_aligned"                      // (k,) when the head's key and query are aligned
	TPredictedFromStart = "t_predicted_from_plateau_start" // (k,) the 1-D theory's from the previous drop (−1: none)
	MaxDeviation        = "max_deviation"                  // (k,) max |v_full − v_1D| / v*
	CurveDrop           = "curve_drop"                     // (c,) int: the drop of each curve point
	CurveT              = "curve_t"                        // (c,) its time
	CurveVFull          = "curve_v_full"                   // (c,) the head's value weight in the flow
	CurveVReduced       = "curve_v_reduced"                // (c,) and in the 1-D theory
	TDropPaper          = "t_drop_paper"                   // () merged: τ/(2‖Λ²‖_F)·ln(1/s₀), paper eq. attnM-duration
	TDropRefined        = "t_drop_refined"                 // () merged: reduced.MergedDropTime
	TDropObserved       = "t_drop_observed"                // () merged: the observed drop
)

// Arrays of linattn landscape, one row per fixed point M(S) (2^D for the
// separate model; for the merged model the rows zero and minimum, with
// Loss, StabilityClass and the eigenvalue counts only).
const (
	Bitmask             = "bitmask"              // (rows,) int: bit d−1 set when e_d is learned
	Subset              = "subset"               // (rows, D) bool: the same bits
	SubsetSize          = "size"                 // (rows,) int: |S|
	OnPath              = "on_path"              // (rows,) bool: S = {1..m}, visited from small initialization
	NPositive           = "n_positive"           // (rows,) int: Jacobian eigenvalues > 0
	NZero               = "n_zero"               // (rows,) int: = 0
	NNegative           = "n_negative"           // (rows,) int: < 0
	StabilityClass      = "class"                // (rows,) int: the index in ClassNames
	UnstableRate        = "unstable_rate"        // (rows,) the largest Jacobian eigenvalue
	EscapeRate          = "escape_rate"          // (rows,) the fastest escape through a dormant head, λ²/τ
	Residual            = "residual"             // (rows,) ‖f‖ at the point
	JacobianEigenvalues = "jacobian_eigenvalues" // (rows, n)
	AltExists           = "alt_exists"           // (rows,) bool: R > 1, a one-per-head realization exists
	AltClass            = "alt_class"            // (rows,) int: its class
	AltNPositive        = "alt_n_positive"       // (rows,) int
	AltUnstableRate     = "alt_unstable_rate"    // (rows,)
)

// ClassNames name the values of StabilityClass (landscape.Class).
func ClassNames() []string { return []string{"minimum", "strict saddle", "higher-order saddle"} }

// Arrays of a sweep's index.npz, one row per run.
const (
	IndexRun          = "run"           // (runs,) int
	IndexStatus       = "status"        // (runs,) int: StatusCodes
	IndexFinalLoss    = "final_loss"    // (runs,) −1 when the run produced none
	IndexTEnd         = "t_end"         // (runs,) −1 when the run produced none
	IndexNTransitions = "n_transitions" // (runs,) int
	// IndexParamPrefix + a swept field's name is its column (runs,): the
	// value when all values are numbers, else the index of the value in
	// Index.ParamValues.
	IndexParamPrefix = "param_"
)
