package ode

// Tableau describes an explicit embedded Runge–Kutta pair with a continuous
// extension by its Butcher tableau. It is plain data: NewRK validates it and
// builds the method the solver uses.
//
// Stages are numbered from 0. Stages 0..s-1 (s = len(C)) form the step
//
//	k_i = f(t + C[i]·h, y + h Σ_{j<i} A[i][j] k_j),  y₁ = y + h Σ_i B[i] k_i,
//
// and stage s is always k_s = f(t + h, y₁), which is reused as stage 0 of the
// next step (first same as last, FSAL). A step therefore costs s evaluations.
// The local error estimate is h Σ_{i≤s} E[i] k_i with E = b − b̂ over the s+1
// stages. Stages s+1, s+2, … (ExtraC, ExtraA) are computed only when the
// continuous extension is needed.
//
// The continuous extension is stored in Hairer's form (HNW I, II.6):
//
//	y(t + θh) = y + θ(F₁ + (1−θ)(F₂ + θ(F₃ + (1−θ)(F₄ + …)))),  F_j = h Σ_i Dense[j][i] k_i,
//
// that is y + Σ_j φ_j(θ) F_j with φ_j = θ^⌈j/2⌉ (1−θ)^⌊j/2⌋.
type Tableau struct {
	Name       string
	Order      int // order of the propagated solution y₁
	ErrorOrder int // order of the embedded solution b̂; sets the step-control exponents
	DenseOrder int // order of the continuous extension

	C []float64   // nodes of stages 0..s-1
	A [][]float64 // A[i] has length i
	B []float64   // weights of y₁, length s
	E []float64   // b − b̂ over stages 0..s, length s+1

	// E3, if not nil, is DOP853's second error estimate (weights b − b̂₃ of
	// an order-3 formula), combined with E by Hairer's formula
	// err = err₅² / sqrt(err₅² + 0.01·err₃²) (dop853.f).
	E3 []float64

	ExtraC []float64   // nodes of the extra dense-output stages s+1, s+2, …
	ExtraA [][]float64 // ExtraA[m] has length s+1+m
	Dense  [][]float64 // Hairer-form weights F_j; each row covers every stage

	// Default step-size control (Hairer's choices for each code).
	Beta1, Beta2       float64 // PI exponents: h_new = h·safety·err^−Beta1·errPrev^Beta2
	MinScale, MaxScale float64 // clamps on h_new/h
}

// RK is an explicit embedded Runge–Kutta method, built from a Tableau by
// NewRK. It is immutable: the solver and every caller see the same
// coefficients, which Tableau returns a copy of.
type RK struct {
	tab            Tableau
	stabilityBound float64  // β of the real stability interval [−β, 0]
	rows           [][]coef // sparse A rows over all stages (method, FSAL and extra)
	cAll           []float64
	bSp            []coef
	eSp            []coef
	e3Sp           []coef
	dSp            [][]coef
}

type coef struct {
	j int
	a float64
}

// Name returns the method's name.
func (m *RK) Name() string { return m.tab.Name }

// Family returns Explicit.
func (m *RK) Family() Family { return Explicit }

// Order returns the order of the propagated solution.
func (m *RK) Order() int { return m.tab.Order }

// Stages returns s, the number of stages of a step before the FSAL stage.
func (m *RK) Stages() int { return len(m.tab.C) }

// Tableau returns a copy of the method's coefficients.
func (m *RK) Tableau() Tableau { return m.tab.clone() }

// totalStages is s + 1 + number of extra stages.
func (m *RK) totalStages() int { return len(m.tab.C) + 1 + len(m.tab.ExtraC) }

// hermiteRows returns the first three Hairer-form dense rows, which every
// method here shares: F₁ = y₁ − y, F₂ = h k₀ − F₁, F₃ = F₁ − h k_s − F₂
// (dopri5.f and dop853.f, CONTD5/CONTD8), padded to n stages.
func hermiteRows(b []float64, n int) [][]float64 {
	s := len(b)
	f1 := make([]float64, n)
	f2 := make([]float64, n)
	f3 := make([]float64, n)
	for i, bi := range b {
		f1[i] = bi
		f2[i] = -bi
		f3[i] = 2 * bi
	}
	f2[0]++
	f3[0]--
	f3[s]--
	return [][]float64{f1, f2, f3}
}

// DP5 is the Dormand–Prince 5(4) pair (RK5(4)7M) with the 4th-order
// continuous extension of Shampine (1986) in Hairer's form, as in dopri5.f.
// Coefficients: Dormand & Prince (1980), Table 2; HNW I, Table II.5.2 and
// II.6 (dense output). Note E[6] = −1/40: b̂₇ = 1/40 enters b − b̂ with a minus
// sign, which some printed tables get wrong.
var DP5 = mustRK(dp5())

func dp5() Tableau {
	b := []float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}
	dense := hermiteRows(b, 7)
	dense = append(dense, []float64{
		-12715105075.0 / 11282082432, 0, 87487479700.0 / 32700410799,
		-10690763975.0 / 1880347072, 701980252875.0 / 199316789632,
		-1453857185.0 / 822651844, 69997945.0 / 29380423,
	})
	return Tableau{
		Name: "DP5", Order: 5, ErrorOrder: 4, DenseOrder: 4,
		C: []float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1},
		A: [][]float64{
			{},
			{1.0 / 5},
			{3.0 / 40, 9.0 / 40},
			{44.0 / 45, -56.0 / 15, 32.0 / 9},
			{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
			{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		},
		B:     b,
		E:     []float64{71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40},
		Dense: dense,
		// dopri5.f: BETA = 0.04, EXPO1 = 0.2 − BETA·0.75, FAC1 = 0.2, FAC2 = 10.
		Beta1: 0.2 - 0.04*0.75, Beta2: 0.04, MinScale: 0.2, MaxScale: 10,
	}
}

// Tsit5 is Tsitouras' 5(4) pair with its free 4th-order interpolant
// (Tsitouras 2011, Table 1 and the b_i(θ) of section 3). The first column of
// A and the node c are tied by the row-sum condition, so A[i][0] is computed
// as c_i − Σ_{j≥1} A[i][j] as the paper prescribes. The published b̂ table has
// a sign error in its last entry: E[6] = b₇ − b̂₇ = −1/66, which the
// order-condition tests confirm.
var Tsit5 = mustRK(tsit5())

func tsit5() Tableau {
	c := []float64{0, 0.161, 0.327, 0.9, 0.9800255409045097, 1}
	a := [][]float64{
		{},
		{0},
		{0, 0.3354806554923570},
		{0, -6.359448489975075, 4.362295432869581},
		{0, -11.74888356406283, 7.495539342889836, -0.09249506636175525},
		{0, -12.92096931784711, 8.159367898576159, -0.07158497328140100, -0.02826905039406838},
	}
	for i := 1; i < len(a); i++ {
		sum := 0.0
		for _, v := range a[i][1:] {
			sum += v
		}
		a[i][0] = c[i] - sum
	}
	b := []float64{0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774}
	// b − b̂ to double precision (the paper prints it, under the name b̂, to 15
	// digits; these are the values of OrdinaryDiffEq.jl's tsit_tableaus.jl,
	// negated). Σ E = 0 holds only with E[6] = −1/66.
	e := []float64{0.0017800110522257773, 0.0008164344596567463, -0.007880878010261994,
		0.1447110071732629, -0.5823571654525552, 0.45808210592918686, -1.0 / 66}

	// b_i(θ) of Tsitouras (2011), section 3, as products of factors.
	poly := [][]float64{
		pmul([]float64{0, -1.0530884977290216}, []float64{-1.3299890189751412, 1}, []float64{0.7139816917074209, -1.4364028541716351, 1}),
		pmul([]float64{0, 0, 0.1017}, []float64{1.2949852507374631, -2.1966568338249754, 1}),
		pmul([]float64{0, 0, 2.490627285651252793}, []float64{1.57803468208092486, -2.38535645472061657, 1}),
		pmul([]float64{0, 0, -16.54810288924490272}, []float64{-1.21712927295533244, 1}, []float64{-0.61620406037800089, 1}),
		pmul([]float64{0, 0, 47.37952196281928122}, []float64{-1.203071208372362603, 1}, []float64{-0.658047292653547382, 1}),
		pmul([]float64{0, 0, -34.87065786149660974}, []float64{-1.2, 1}, []float64{-2.0 / 3, 1}),
		pmul([]float64{0, 0, 2.5}, []float64{-1, 1}, []float64{-0.6, 1}),
	}
	return Tableau{
		Name: "Tsit5", Order: 5, ErrorOrder: 4, DenseOrder: 4,
		C: c, A: a, B: b, E: e,
		Dense: hairerForm(poly, 4),
		// OrdinaryDiffEq.jl uses dopri5's controller for Tsit5.
		Beta1: 0.2 - 0.04*0.75, Beta2: 0.04, MinScale: 0.2, MaxScale: 10,
	}
}

// pmul multiplies polynomials given by their power-basis coefficients.
func pmul(ps ...[]float64) []float64 {
	out := []float64{1}
	for _, p := range ps {
		r := make([]float64, len(out)+len(p)-1)
		for i, a := range out {
			for j, b := range p {
				r[i+j] += a * b
			}
		}
		out = r
	}
	return out
}

// phi returns the power-basis coefficients of φ_j(θ) = θ^⌈j/2⌉ (1−θ)^⌊j/2⌋.
func phi(j int) []float64 {
	p := []float64{1}
	for k := 0; k < (j+1)/2; k++ {
		p = pmul(p, []float64{0, 1})
	}
	for k := 0; k < j/2; k++ {
		p = pmul(p, []float64{1, -1})
	}
	return p
}

// hairerForm converts interpolation weights b_i(θ), given per stage in the
// power basis with zero constant term and degree ≤ deg, to Hairer-form rows:
// b_i(θ) = Σ_j φ_j(θ) Dense[j-1][i]. φ_j has degree j, so the change of basis
// is triangular.
func hairerForm(poly [][]float64, deg int) [][]float64 {
	dense := make([][]float64, deg)
	for j := range dense {
		dense[j] = make([]float64, len(poly))
	}
	for i, p := range poly {
		rem := make([]float64, deg+1)
		copy(rem, p)
		for j := deg; j >= 1; j-- {
			ph := phi(j)
			beta := rem[j] / ph[j]
			dense[j-1][i] = beta
			for k, v := range ph {
				rem[k] -= beta * v
			}
		}
	}
	return dense
}

// DOP853 is the Dormand–Prince 8(5,3) pair of Hairer's dop853.f with its
// 7th-order continuous extension (three extra stages). Coefficients: HNW I,
// section II.10 and the DATA statements of dop853.f (as reprinted in
// Numerical Recipes, 3rd ed., StepperDopr853). The error estimate combines a
// 5th- and a 3rd-order formula (E, E3).
var DOP853 = mustRK(dop853())

func dop853() Tableau {
	const (
		a21   = 5.26001519587677318785587544488e-2
		a31   = 1.97250569845378994544595329183e-2
		a32   = 5.91751709536136983633785987549e-2
		a41   = 2.95875854768068491816892993775e-2
		a43   = 8.87627564304205475450678981324e-2
		a51   = 2.41365134159266685502369798665e-1
		a53   = -8.84549479328286085344864962717e-1
		a54   = 9.24834003261792003115737966543e-1
		a61   = 3.7037037037037037037037037037e-2
		a64   = 1.70828608729473871279604482173e-1
		a65   = 1.25467687566822425016691814123e-1
		a71   = 3.7109375e-2
		a74   = 1.70252211019544039314978060272e-1
		a75   = 6.02165389804559606850219397283e-2
		a76   = -1.7578125e-2
		a81   = 3.70920001185047927108779319836e-2
		a84   = 1.70383925712239993810214054705e-1
		a85   = 1.07262030446373284651809199168e-1
		a86   = -1.53194377486244017527936158236e-2
		a87   = 8.27378916381402288758473766002e-3
		a91   = 6.24110958716075717114429577812e-1
		a94   = -3.36089262944694129406857109825e0
		a95   = -8.68219346841726006818189891453e-1
		a96   = 2.75920996994467083049415600797e1
		a97   = 2.01540675504778934086186788979e1
		a98   = -4.34898841810699588477366255144e1
		a101  = 4.77662536438264365890433908527e-1
		a104  = -2.48811461997166764192642586468e0
		a105  = -5.90290826836842996371446475743e-1
		a106  = 2.12300514481811942347288949897e1
		a107  = 1.52792336328824235832596922938e1
		a108  = -3.32882109689848629194453265587e1
		a109  = -2.03312017085086261358222928593e-2
		a111  = -9.3714243008598732571704021658e-1
		a114  = 5.18637242884406370830023853209e0
		a115  = 1.09143734899672957818500254654e0
		a116  = -8.14978701074692612513997267357e0
		a117  = -1.85200656599969598641566180701e1
		a118  = 2.27394870993505042818970056734e1
		a119  = 2.49360555267965238987089396762e0
		a1110 = -3.0467644718982195003823669022e0
		a121  = 2.27331014751653820792359768449e0
		a124  = -1.05344954667372501984066689879e1
		a125  = -2.00087205822486249909675718444e0
		a126  = -1.79589318631187989172765950534e1
		a127  = 2.79488845294199600508499808837e1
		a128  = -2.85899827713502369474065508674e0
		a129  = -8.87285693353062954433549289258e0
		a1210 = 1.23605671757943030647266201528e1
		a1211 = 6.43392746015763530355970484046e-1

		b1  = 5.42937341165687622380535766363e-2
		b6  = 4.45031289275240888144113950566e0
		b7  = 1.89151789931450038304281599044e0
		b8  = -5.8012039600105847814672114227e0
		b9  = 3.1116436695781989440891606237e-1
		b10 = -1.52160949662516078556178806805e-1
		b11 = 2.01365400804030348374776537501e-1
		b12 = 4.47106157277725905176885569043e-2

		bhh1 = 0.244094488188976377952755905512e+00
		bhh2 = 0.733846688281611857341361741547e+00
		bhh3 = 0.220588235294117647058823529412e-01

		er1  = 0.1312004499419488073250102996e-01
		er6  = -0.1225156446376204440720569753e+01
		er7  = -0.4957589496572501915214079952e+00
		er8  = 0.1664377182454986536961530415e+01
		er9  = -0.3503288487499736816886487290e+00
		er10 = 0.3341791187130174790297318841e+00
		er11 = 0.8192320648511571246570742613e-01
		er12 = -0.2235530786388629525884427845e-01

		a141  = 5.61675022830479523392909219681e-2
		a147  = 2.53500210216624811088794765333e-1
		a148  = -2.46239037470802489917441475441e-1
		a149  = -1.24191423263816360469010140626e-1
		a1410 = 1.5329179827876569731206322685e-1
		a1411 = 8.20105229563468988491666602057e-3
		a1412 = 7.56789766054569976138603589584e-3
		a1413 = -8.298e-3

		a151  = 3.18346481635021405060768473261e-2
		a156  = 2.83009096723667755288322961402e-2
		a157  = 5.35419883074385676223797384372e-2
		a158  = -5.49237485713909884646569340306e-2
		a1511 = -1.08347328697249322858509316994e-4
		a1512 = 3.82571090835658412954920192323e-4
		a1513 = -3.40465008687404560802977114492e-4
		a1514 = 1.41312443674632500278074618366e-1

		a161  = -4.28896301583791923408573538692e-1
		a166  = -4.69762141536116384314449447206e0
		a167  = 7.68342119606259904184240953878e0
		a168  = 4.06898981839711007970213554331e0
		a169  = 3.56727187455281109270669543021e-1
		a1613 = -1.39902416515901462129418009734e-3
		a1614 = 2.9475147891527723389556272149e0
		a1615 = -9.15095847217987001081870187138e0
	)
	c := []float64{
		0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
		0.118350341907227396726757197510e+00, 0.281649658092772603273242802490e+00,
		0.333333333333333333333333333333e+00, 0.25e+00, 0.307692307692307692307692307692e+00,
		0.651282051282051282051282051282e+00, 0.6e+00, 0.857142857142857142857142857142e+00, 1,
	}
	a := [][]float64{
		{},
		{a21},
		{a31, a32},
		{a41, 0, a43},
		{a51, 0, a53, a54},
		{a61, 0, 0, a64, a65},
		{a71, 0, 0, a74, a75, a76},
		{a81, 0, 0, a84, a85, a86, a87},
		{a91, 0, 0, a94, a95, a96, a97, a98},
		{a101, 0, 0, a104, a105, a106, a107, a108, a109},
		{a111, 0, 0, a114, a115, a116, a117, a118, a119, a1110},
		{a121, 0, 0, a124, a125, a126, a127, a128, a129, a1210, a1211},
	}
	b := []float64{b1, 0, 0, 0, 0, b6, b7, b8, b9, b10, b11, b12}
	e := []float64{er1, 0, 0, 0, 0, er6, er7, er8, er9, er10, er11, er12, 0}
	e3 := make([]float64, 13)
	copy(e3, b)
	e3[0] -= bhh1
	e3[8] -= bhh2
	e3[11] -= bhh3

	dense := hermiteRows(b, 16)
	dense = append(dense,
		[]float64{-0.84289382761090128651353491142e+01, 0, 0, 0, 0,
			0.56671495351937776962531783590e+00, -0.30689499459498916912797304727e+01,
			0.23846676565120698287728149680e+01, 0.21170345824450282767155149946e+01,
			-0.87139158377797299206789907490e+00, 0.22404374302607882758541771650e+01,
			0.63157877876946881815570249290e+00, -0.88990336451333310820698117400e-01,
			0.18148505520854727256656404962e+02, -0.91946323924783554000451984436e+01,
			-0.44360363875948939664310572000e+01},
		[]float64{0.10427508642579134603413151009e+02, 0, 0, 0, 0,
			0.24228349177525818288430175319e+03, 0.16520045171727028198505394887e+03,
			-0.37454675472269020279518312152e+03, -0.22113666853125306036270938578e+02,
			0.77334326684722638389603898808e+01, -0.30674084731089398182061213626e+02,
			-0.93321305264302278729567221706e+01, 0.15697238121770843886131091075e+02,
			-0.31139403219565177677282850411e+02, -0.93529243588444783865713862664e+01,
			0.35816841486394083752465898540e+02},
		[]float64{0.19985053242002433820987653617e+02, 0, 0, 0, 0,
			-0.38703730874935176555105901742e+03, -0.18917813819516756882830838328e+03,
			0.52780815920542364900561016686e+03, -0.11573902539959630126141871134e+02,
			0.68812326946963000169666922661e+01, -0.10006050966910838403183860980e+01,
			0.77771377980534432092869265740e+00, -0.27782057523535084065932004339e+01,
			-0.60196695231264120758267380846e+02, 0.84320405506677161018159903784e+02,
			0.11992291136182789328035130030e+02},
		[]float64{-0.25693933462703749003312586129e+02, 0, 0, 0, 0,
			-0.15418974869023643374053993627e+03, -0.23152937917604549567536039109e+03,
			0.35763911791061412378285349910e+03, 0.93405324183624310003907691704e+02,
			-0.37458323136451633156875139351e+02, 0.10409964950896230045147246184e+03,
			0.29840293426660503123344363579e+02, -0.43533456590011143754432175058e+02,
			0.96324553959188282948394950600e+02, -0.39177261675615439165231486172e+02,
			-0.14972683625798562581422125276e+03},
	)
	return Tableau{
		Name: "DOP853", Order: 8, ErrorOrder: 7, DenseOrder: 7,
		C: c, A: a, B: b, E: e, E3: e3,
		ExtraC: []float64{0.1, 0.2, 0.777777777777777777777777777778e+00},
		ExtraA: [][]float64{
			{a141, 0, 0, 0, 0, 0, a147, a148, a149, a1410, a1411, a1412, a1413},
			{a151, 0, 0, 0, 0, a156, a157, a158, 0, 0, a1511, a1512, a1513, a1514},
			{a161, 0, 0, 0, 0, a166, a167, a168, a169, 0, 0, 0, a1613, a1614, a1615},
		},
		Dense: dense,
		// dop853.f: BETA = 0, EXPO1 = 1/8, FAC1 = 0.333, FAC2 = 6.
		Beta1: 1.0 / 8, Beta2: 0, MinScale: 0.333, MaxScale: 6,
	}
}
