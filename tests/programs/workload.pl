# A Perl workload: hashes, regexes, sorting, string building.  Prints a digest.
use strict; use warnings; use Digest::MD5 qw(md5_hex);
my %h; my $s = '';
for my $i (1 .. 200000) { $h{"k$i"} = [ $i, "v" x ($i % 13) ]; }
for my $k (sort { $h{$a}[0] <=> $h{$b}[0] } keys %h) { $s .= $k if $h{$k}[0] % 97 == 0; }
my @m = ($s =~ /k(\d+)/g);
my $text = join(' ', map { scalar reverse $_ } @m);
$text =~ s/(\d)(\d)/$2$1/g;
print md5_hex($s . $text . scalar(@m)), "\n";
