module github.com/linattn/linattn

go 1.24.0

require (
	github.com/sbinet/npyio v0.9.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	golang.org/x/text v0.23.0 // indirect
)
