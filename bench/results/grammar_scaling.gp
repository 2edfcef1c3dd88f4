if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1100,450 font ',10' } else { set terminal png size 1100,450 }
set output 'grammar_scaling.png'
set multiplot layout 1,2 title 'Scaling with grammar size (llama3; log-log axes)'
set key top left
set grid
set logscale xy
set xlabel 'productions (after EBNF desugaring)'
set ylabel 'per-token mask time, µs (step-min)'
plot 'grammar_scaling.dat' index 0 using 1:2 with points pt 7 ps 1.5 lc 1 title 'bundled, corpus: mean', '' index 0 using 1:2:5 with labels offset 1,1 notitle, '' index 1 using 1:2 with linespoints lw 2 lc 2 title 'synthetic, random walks: mean', '' index 1 using 1:3 with linespoints dt 2 lc 2 title 'synthetic: p99'
set ylabel 'eager preprocessing, CPU s'
plot 'grammar_scaling.dat' index 0 using 1:4 with points pt 7 ps 1.5 lc 1 title 'bundled', '' index 0 using 1:4:5 with labels offset 1,1 notitle, '' index 1 using 1:4 with linespoints lw 2 lc 2 title 'synthetic'
unset multiplot
