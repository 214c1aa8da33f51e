module polignac-bot

go 1.19
