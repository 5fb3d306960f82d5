module github.com/skillgate/skillgate

go 1.26
