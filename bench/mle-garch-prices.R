suppressMessages(library(fGarch))
set.seed(20260101)
spec <- garchSpec(model = list(mu = 3e-4, omega = 2e-6, alpha = 0.09, beta = 0.89, skew = 0.9, shape = 1.3), cond.dist = "sged")
r <- garchSim(spec, n = 1860)
x <- as.numeric(r)
p <- 5000 * exp(cumsum(c(0, x)))
d <- seq(as.Date("2015-01-02"), by = "day", length.out = 4000)
d <- d[!(weekdays(d) %in% c("Saturday", "Sunday"))][1:length(p)]
write.csv(data.frame(date = format(d), close = sprintf("%.2f", p)), "garch-prices.csv", row.names = FALSE, quote = FALSE)
