"""The cost page's budget by month: a day's traffic, a year's growth, every way to pay, scenarios and the workbook."""
