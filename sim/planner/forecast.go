package planner

import (
	"math"

	"github.com/servesweep/servesweep/sim/config"
)

// forecaster forecasts the next value of a series observed once per throughput interval (the
// planner's load predictors, planner.load_predictor, dynosim-spec.md §3.4).
type forecaster interface {
	// add appends an observation; next forecasts the following one (>= 0).
	add(y float64)
	next() float64
}

// newForecaster returns the forecaster set names (constant, arima or kalman), applying log1p to
// the series when set.Log1p.
func newForecaster(set config.PlannerSettings) forecaster {
	var p forecaster
	switch set.Predictor {
	case config.PredictorConstant:
		p = &constantForecaster{}
	case config.PredictorKalman:
		p = &kalmanForecaster{qLevel: set.KalmanQLevel, qTrend: set.KalmanQTrend, r: set.KalmanR, minPoints: set.KalmanMinPoints}
	default:
		p = &arimaForecaster{}
	}
	if set.Log1p {
		p = &log1pForecaster{p}
	}
	return p
}

// constantForecaster forecasts the last observation (0 before any).
type constantForecaster struct{ last float64 }

func (c *constantForecaster) add(y float64) { c.last = y }
func (c *constantForecaster) next() float64 { return c.last }

// arimaForecaster is an ARIMA(1,1,0) model: the first differences d_t = y_t − y_{t−1} follow
// d_t = φ d_{t−1}, with φ fitted by least squares over the whole series, Σ d_t d_{t−1} / Σ
// d_{t−1}², and clipped to [−1, 1]; the forecast is y_n + φ d_n, at least 0. With fewer than
// three observations it forecasts the last one. (The reference fits its ARIMA order
// automatically; this fixed order is servesweep's.)
type arimaForecaster struct{ ys []float64 }

func (a *arimaForecaster) add(y float64) { a.ys = append(a.ys, y) }

func (a *arimaForecaster) next() float64 {
	n := len(a.ys)
	switch {
	case n == 0:
		return 0
	case n < 3:
		return a.ys[n-1]
	}
	var num, den float64
	for t := 2; t < n; t++ {
		d, prev := a.ys[t]-a.ys[t-1], a.ys[t-1]-a.ys[t-2]
		num += d * prev
		den += prev * prev
	}
	phi := 0.0
	if den > 0 {
		phi = math.Max(-1, math.Min(1, num/den))
	}
	return math.Max(0, a.ys[n-1]+phi*(a.ys[n-1]-a.ys[n-2]))
}

// kalmanForecaster is a local linear trend Kalman filter: state (level, trend), level_{t+1} =
// level_t + trend_t + w₁, trend_{t+1} = trend_t + w₂, observation y_t = level_t + v, with
// process noise variances qLevel and qTrend and observation noise variance r (the spec's
// kalman_q_level, kalman_q_trend, kalman_r). The filter starts at the first observation with
// trend 0 and variances r; the forecast is level + trend (at least 0), or the last observation
// while fewer than minPoints (kalman_min_points) have been seen.
type kalmanForecaster struct {
	qLevel, qTrend, r float64
	minPoints         int
	n                 int
	last              float64
	level, trend      float64
	p                 [2][2]float64
}

func (k *kalmanForecaster) add(y float64) {
	k.n++
	k.last = y
	if k.n == 1 {
		k.level, k.trend = y, 0
		k.p = [2][2]float64{{k.r, 0}, {0, k.r}}
		return
	}
	// Predict: x = F x, P = F P Fᵀ + Q with F = [[1, 1], [0, 1]].
	l, t := k.level+k.trend, k.trend
	p := k.p
	p00 := p[0][0] + p[0][1] + p[1][0] + p[1][1] + k.qLevel
	p01 := p[0][1] + p[1][1]
	p10 := p[1][0] + p[1][1]
	p11 := p[1][1] + k.qTrend
	// Update with H = [1, 0].
	s := p00 + k.r
	g0, g1 := p00/s, p10/s
	e := y - l
	k.level, k.trend = l+g0*e, t+g1*e
	k.p = [2][2]float64{{(1 - g0) * p00, (1 - g0) * p01}, {p10 - g1*p00, p11 - g1*p01}}
}

func (k *kalmanForecaster) next() float64 {
	if k.n < max(k.minPoints, 1) {
		return k.last
	}
	return math.Max(0, k.level+k.trend)
}

// log1pForecaster runs its forecaster on log(1 + y) and maps the forecast back with exp(x) − 1
// (planner.load_predictor_log1p).
type log1pForecaster struct{ f forecaster }

func (l *log1pForecaster) add(y float64) { l.f.add(math.Log1p(math.Max(y, 0))) }
func (l *log1pForecaster) next() float64 { return math.Max(0, math.Expm1(l.f.next())) }
