Mladý muž se účastní automobilu, zatímco se zvláštně usmívá.
Muž se šklebí dozadu a dívá se na knihu v obchodě.
Člověk v ochranných brýlích a klobouku jede na bobech.
Dívka v růžovém kabátě a květinových montérkách sáňkuje z kopce.
Tři dívky stojí před oknem budovy.
Dva psi si hrají s brousem na svých ústech.
Pohled shora na lidi, kteří jsou zavěšeni z karnevalu.
Černo-bílá fotografie dvou lidí, kteří sledují nádherné obraz.
Muž oblečený v černém přechází ulici.
Dítě sedí na rušné ulici na rušné ulici.
11 psů si hraje na oploceném dvoře vedle domu. 15
Opravářka na rušné ulici před červenou budovou.
Člověk jde jeden černý pes na vodítku, zatímco žlutý pes nanáší.
Pes leží na venkovní lavičce s sochou vedle žlutého tenisového míčku, ležící na zemi.
Muž jede na kole s dítětem.
Velký hnědý pes a malý bílý pes si hrají s létajícím talířem v puse.
Čtyři děti sedí u zdi a povídají si, zatímco dva dospělí z nich hledí do místa.
Tři dívky sedí a povídají si, zatímco dospělí pózují pro foťák.
Plavní budova je na písku za zamračeného dne.
Toto je mladá dívka, která se dívá do mobilu, zatímco chlapec vedle ní se dívá.
Pohled shora na lidi, kteří jdou blízko pláže.
Pes zírá na sochu psa na zahradě.
Hnědý pes s klackem na palubě.
Afroameričan hraje na kytaru a zpívá v městském prostředí.
Mladá dívka tancuje na pódiu, zatímco její modrou sukní to to točí.
Toto je obrázek čtyř žen v šatech před skupinou lidí.
Žena stojí v metru a čeká na vlak.
Dvě dívky mají na sobě bundy venku a jedí zmrzlinu.
Černo bílý záběr z muže sbírá noviny na ulici ve městě.
Dav stojí venku a drží svých mobilech.
Toto je obrázek psa, který běží kolem stromu v zalesněné oblasti.
Tato fotka muže a žena jdou po pláži před palmami.
Mladá dívka, která drží transparent s nápisem "MON" MISE NISOOOOISE MOIS, MOP, MISTOOOOOP, na ramena sedí na ramenou.
Světle hnědý pes se přetahuje z hadice.
Dívka a chlapec pózují pro fotku, v pozadí sedí několik lidí.
Dva lidé pracují na údolí písečné soše, který je podobně jako muž.
Černobílý fotografie chlapce uprostřed ulice.
Mladá dívka v bílém kabátě tleská a možná radostně nadšťastně nebo šťastně.
Pes skáče po hračce a drží hračku.
Bílý pes s hnědými skvrnami vykopává s přikrývkami písku.
Koč a pes se snaží hrát na piano.
Dítě s modrým baretovaným kloboukem zírá na něco za plotem.
Toto je obrázek malé dívky, která se opírá o místo, zatímco se diváci dívají do zrcadla v zrcadle.
Černošská dívka visí vzhůru nohama se svými malými mrtvými mraky.
Černobílý obrázek ženy v kavárně, s odrazem a odrazem v okně auta.
Černý pes vychází z pláže s hračkou na jeho kmene.
Dívky mají kachny, zatímco nosí plastové kostýmy nad jejich kostýmy.
Muž drží a mluví přes megafon na ulici.
Šest dětí různých renes stojí před dřevěným plotem.
Dítě je celá v bílém s namalovaným obličejem.
Muž ve žlutém triku a slunečních brýlích jde po ulici.
Pes odpočívá v trávě, zatímco se na něj dívá dovnitř.
Žena se směje a objímá psa, zatímco sedí na trávě.
Rozmazaná fotka něčího, co jde terminálu.
Blonďaté a bílé dítě s rukama na vozíku.
Pět bílých štěňata spolu schovávají s jednou olizuje s jednou tabuli.
Štěně je šéfkuchař na vrchu červeného vlaku.
Černý pes s nohama před jednou žlutou kapelou na jedné noze.
Mladá dívka sešlo a zavřenýma očima si užívá hudbu na pódiu.
Černo-bílá fotografie ženy s kytarou přibližuje s kytarou.
Toto je žena, která se dívá na svůj mobil a muž vedle ní pije z lahve.
Černo-bílý obrázek mužů jede na kolech po ulici ve městě. 3
Hnědý pes nese tašku na zádech a uvnitř štěně.
Tři mladí lidé s kytarou odpočívají na vrcholu hory.
Malá dívka a starý muž předvádí akrobatický tanec před davem v ulici.
Světle hnědý pes cáká ve vodní ploše.
Malý pes chytá velký míč, aby chytil míč.
Dva muži na lodi s chlapcem sedí na láhvi a drží láhev.
Černo-bílý obrázek dívky visí vzhůru nohama a ukazují palec nahoru.
Muž s vousy je viděn jak drží hrnek, zatímco muž čte noviny v pozadí.
Pět malých dětí se šklebí s rukama.
Velký bílý pes se snaží vylézt na dřevěné ploše, zatímco je jezera.
Černo-bílý obrázek malého chlapce jedoucího na velkém kole skrz trávu.
Dvě mladé ženy si dávají pauzu vedle zdi, aby se podíval na telefon.
Dav shromážděný v městském prostředí, který používá deštníky a plastovou ponožku, aby se dostalo v dešti.
Člověk skáče z vysokého útesu do řeky pod sebou.
Člověk na divokém raftu přejíždí přes řeku řeky.
Dvě děti skáčou a běží dolů z kopce.
Malé dítě v červeném svetru skáče přes švihadlo na chodníku.
Člověk za oknem, který stojí u okna s člověkem, který je před otevřeným oknem.
Velký bílý pes stojí na dřevěném molu a dívá se na kachnu v jezeře.
Pes ve vodě s výhledem na západ
Bílý pes kouše na prázdné plastové lahve, zatímco stojí ve vodě.
Dívka sedí na trávě vedle bílého psa.
Dívka v zvláštní masce s dalšími lidmi vedle ní.
Žena drží svého psa ve tváři a chystá se políbit.
Skupina policistů v černobílém oblečení.
Někdo skáče z velkého útesu do jezera.
Malíř maluje vědeckou sochu.
Muž a žena se dívají na kachny v skleněném sále.
Na pláži vedle pláže a skupina lidí v pozadí je černobílé a bílé střechy.
Dítě má na sobě oblek s brýlemi před Margarem.
Stará žena v tlusté bundě jí talíř na svém klíně.
Člověk se soustředí na schody v cizí zemi.
Dívka na hřišti má na sobě barevné šaty.
Člověk s roztrhnutýma rukama má na sobě zeleno-žluté kostýmy.
Muž jde kolem vchodu.
Muž hraje na kytaru a pije malý kafe.
Muž jede dolů po schodech v metru.
Muž jde kolem špinavé cesty na kraji silnice.
Žena a její pes míjí jezero u jezera.
Pár starých mužů sedí na chodníku s krabicemi a taškami.
Skupina lidí a psů jsou v parku.
Dvě ženy vlojí své psa na dvorku.
Psi si hrají a hraje na pláži vedle muže v klidné modré vodě.
Tyto děti zametají chladnou, si hrají u fontány ve městě.
Skupina mladých dívek v oranžovo-fialovém vystupují.
Dva psi plavou v obýváku s něčím v puse.
Roztleskávačky v černooranžovém křičí do vzduchu u jiných roztleskávaček.
Scéna scéna lidí jde po dlážděném chodníku s mužem, který stojí poblíž pestrobarevného materiálu a modelových materiály.
Několik dětí se dívá na někoho, co ho honí na chodníku.
Pes olizuje tvář muže, který má brýle na hlavě své brýle.
Člověk v modročerveném oblečení stojí v písku poblíž vody.
Mladá blondýnka v kostýmu předvádí pálku na fotbalovém hřišti.
Muž sedí na židli na okraji vody s rybářským prutem.
Dítě drží za ruce s leopardím plynovým masem.
Evropský stánek s jejím hnědým psem, který běží k jejím.
Žena a její vodítka blízko kraje rybníka.
Hnědý pes sedí vedle muže, který se ohýbá pod vánočním stromečkem.
Muž a žena sedí na lavičce v parku a dívají se na jiného muže a ženu.
Světle hnědý pes na vodítku jde přes kovovou dráhu pokrytou dřevěnou cestu.
Toto je obrázek dívky, která se dívá doprava a drží tři prsty.
Chlapec v klobouku sedí na kachličce na hračce.
Žena fotí dvě ženy s budovami v pozadí asijské aréně.
Člověk oblečený v bílé motokrosové výstroji sedí na bílém místě s výhledem za nimi.
Chlapec v bílé bundě stojí sám u dlouhých dveří.
Žena se sluchátky jde po cestě obklopené stromy.
Prodavačka připravuje rybu za stolem s potřebami na prodej.
Žena venčí svého psa pro cestu v lese.
Autobus se zastavilo na ulici ve městě s mraky a lidmi, kteří jdou.
Tři muži si hrají na koncertě, jeden z nich má masku.
Žena v autobuse se zavřenýma očima v ruce.
Blonďatá dívka ve žlutých punčochách, růžové sukni a zeleném topu ve skupině přihlížejících.
Mladá dívka pózuje pro ženu, která maluje karikaturu svého náklaďáku.
Černo-bílé scény ženy sedí na lavičce a drží vodítko u vody.
Černobílý výhled na člověka, který jde vedle velké zdi.
Žena v černém oblečení kupuje jídlo u stánku se zeleninou a zeleninou.
Prodavač a další produkty jsou vystaveny na venkovním trhu.
Několik turistů jde velmi pěkným klenutým obloukem v dešti.
Policisté čekají u chodníku poblíž muže v gumových kozačkách a helmě.
Kočka sahá na člověka a bere ho.
Člověk sedí se zkříženýma rukama a na něj sedí vedle něho.
Malý hnědý pes ozdobený černý pes omotaným bílým límečkem sedí na podlaze a zírá, že sedí na dřevěnou čepici a ohlíží se.
Žena držící novorozeně sedí na gauči s mužem, který kontroluje novorozeně.
Střední uličká ulička s pneumatikou po stranách vysoká budov.
Dva lidé jdou po ulici vedle odpadkového kanálu.
Černo-bílý obrázek muže, který sedí na malé zdi s mladým mužem stojícím mužem.
Černý pes s hračkou v puse jde ve vodě.
Černé štěně má na sobě zlatou pásku a jde po sněhu.
Černo-bílý obrázek chlapce pod stanem spadlých strážců pod plotem, který se dívá do kamery.
Dvě ženy sedí a muž s kamerou stojí vedle nich.
Dvě ženy s roztaženými rukami jdou po ulici.
Muž klečí se skloněnou hlavou v tmavé místnosti s malým světlem na každé straně.
Toto je obrázek psa, který sedí a dívá se na někoho, co ho fotí.
Muž v klobouku sedí na zemi.
Několik lidí zkoumá vzorek v dlouhé řadě.
Bílý pes s hnědým obličejem sedí na cihlovém chodníku.
Člověk se drží zábradlí na procházce.
Člověk v kabátě a šále píše ve otevřené římse.
Pár barevně barvách v něčemu se zdá být v parku.
Mladá žena s culíkem v bundě stojí v metru proti zdi s roztaženýma rukama.
3, dva černí psi a malý hnědý pes si hrají ve sněhu.
Hnědý pes se chystá kousnout černobílého psa.
Pes skáče nahoru a snaží se zvednout betonovou zeď.
Balerína sedí na židli u stolu s oranžovým hrnkem.
Blondýna vydává skleněné dveře obchodu.
Člověk a černý pes sedí před televizí.
Muž stojí v hubě řady prázdných mrtvů.
Žena v květované sukni jde se třemi dětmi směrem k ženě a chlapec.
Pes utíká na vodítku před budovou.
Žena v kostkovaném kabátě nese kabelku.
Červený Volkswagen sedí v popředí festivalu.
Muž a tři ženy spolu mluví, jedna z nich sedí na bílé lavičce.
Žena jde s rukou kolem dítěte.
Dva stavební dělníci opírají o zásoby, zatímco si povídají.
Skupina tří mužů a žen jde po schodech z podzemného tunelu.
Muž a žena se drží za ruce.
Skupina žen a mladých dívek s rukami ve stylu na chodníku.
Člověk běží k jiným monumentem.
Dvě děti v zimním oblečení sekají na fotce v černé a bílé.
Několik chodců sedících, pravděpodobně stojí a prochází městem s starším mužem v popředí.
Černobílý obrázek pána na lavičce pije lahev s pivem pivo.
Mladá žena s kytkami ve vlasech pózuje v dlouhých červených šatech s regálem.
Černý pták přemýšlí do otevřeného plotu.
Středně velcí pták sedí na identovaném kovovém plotě.
Pohled shora na muže, který čte časopis u stolu časopis.
Toto je obrázek tří dětí s pomalovanými obličeji, které pózuje pro fotku.
Žlutý labrador se chystá zvednout z trávy.
Toto je venkovní scéna s kameny a malou vodou s mostem v pozadí.
Dvě ženy jdou městskou oblastí s hrnkem za oblačného dne.
Muž sedí a drží kočár, na kterém je napsánočeného psa.
Muž v tmavých šortkách jde kolem dalšího muže v červeném triku.
Dívka v džínové bundě hraje na kytaru a zpívá do mikrofonu.
Čtyři muži na vrcholu schodů a jeden muž jde nahoru.
Černo-bílý obrázek dětí běžících po schodech kolem jejich matrace.
Žena jde a drží sekeru domu.
Malé dítě v klobouku drží lopatu, zatímco někdo drží ruku.
Mladý chlapec a muž na palubě lodi venku na slunci.
Dvě dívky, jedna s kšiltovkou a druhá se slunečními brýlemi.
Černo-bílé fotografie muže a jeho manévry poblíž auta.
Žena v červeném kabátě jde po ulici vedle budovy.
Muž stojí na konci mostu pod velkými stromy.
Toto je okno v betonové zdi s mužem na druhé straně.
Stará žena stojí na ulici (v černém a bílých kalhotách.
Mladý muž vypadá, že je uprostřed certiku v bazénu.
Těhotná malé holčičky se dívá na někoho, mračí své matky.
Mladá dívka oblečená v kabátu a klobouku stojí na chodníku s jinými lidmi, kteří chodí za ní.
Malá dívka v brýlích a zimním oblečení je obklopena několika dalšími lidmi v zimním oblečení.
Černo-bílý obrázek muže sedí u okna.
Mladý chlapec s čepicí je vedle auta ve městě.
Mladý chlapec stojí vedle ulice v černé a bílé.
Bílo-černý pes setřásá vodu z jeho chleba.
Muž vesluje na lodi ve vodě se žlutými pádly.
Několik mladých dívek předvádí taneční tanec na pódiu.
Muž v kabátě a klobouku jde kolem červeného nápisu.
Dítě se žlutým náušnými náušnicemi sleduje představení.
Hnědý pes skáče do vzduchu, aby chytil žlutou hračku.
Jedna dívka v červeno-černých šatech s jiným v bílých šatech.
Skupina malých dívek na narozeninové oslavě, jedna z nich něco píše.
Muži rugbyového zápasu, kde ho jeden hází přes druhou.
Hráč ragby v modrém běží s míčem, zatímco jiní hráči obklopují.
Žena v modrých plavkách se mokrými vlasy v řece.
Mladá dívka jí malé křižovatce, zatímco další dívka leží na své ruce a dívá se na hlavu.
Policisté tlačí své koně, aby se dostalo, aby získal míč.
Lidé hrají pólo s pěti lidmi na svých koních.
Žena v modrých šatech stojí před výlohou obchodu na chodníku poblíž schodů.
Dvě dívky v motýlkách a obojkách se drží za ruce.
Tři lidé s surfy na břehu pláže.
Žena je na hoře a snaží se před krásnou pláž.
Žena s kudrnatými vlasy a modrou bundou jde kolem okna na chodníku ve městě.
Dvě ženy jdou po mokré podlaze ve městě.
Dva lidé stojí před velkou bílou budovou s výhledem na město.
Muž ve vodě na malé lodi.
Bílo-bílý pes skáče přes překážkovou dráhu.
Pět zpěváků běží před leopardími.
Motorkář ve žluté a modré jede po dráze.
Dva lidé jedou na špinavých kolech a skáčou do vzduchu.
Barevný pták chytá červený rybu, aby vyskočil z vody.
V jídelně vypadající rodina a mladý chlapec se dívá na fotografa.
Žena a dva muži stojí na rohu města.
Muž sbírá věci z ulice na své hodinky.
Atlet běží v soutěži plném rychlostí.
Dvě dívky a pes sedí a hrají si na skále u řeky.
Velmi atletický boxer odpaluje svačinu.
Je tam chlapec ve žlutém triku a žlutém triku, který dělá triky na skateboardu.
Muž čeká a sleduje vlak, jak jede kolem.
Černobílý fotografie ženy na telefonu s malou dívkou vedle ní, která jde ve městě.
Skupina mužů závodí na kolech po ulici.
Lidé jedou po ulici na kolech po ulici.
Muž, který má na sobě ochrannou helmu, modré tričko a zlatou košili, jede na kole přes melouny v bílém areálu.
Muž a dvě malé děti si užívají pláž a několik plachetnice na vodě.
Lékař plave ve vodě s bublinami okolo.
Tři lidé se drží kladivo a jdou po jezeře.
Dívka v puntíkovaném triku si hraje venku ve vodě.
Lidé jedou po větrné cestě vedle hory.
Pohled shora na cyklisty, kteří závodí kolem obrubníku.
Dvě ženy sedí u kavárny na straně ulice a smějí se, zatímco jedna pije kávu a druhá telefonuje.
Pohled na nádherný pták na podzim.
Muž v polokošili závodí na trati v bílé helmě.
Muž dělá kousek, zatímco skáče do vody.
Stará fotografie fotí sedící na kraji ulice.
Žena v černých kalhotách a triku dělá pózy.
Cyklista na kole a skútrech jede dolů po dálnici ve žluté provazy.
Žena skáče do vzduchu, zatímco několik dalších dívek tančí za ní.
Žena ve žlutém topu a černých šortkách surfuje vysoko na bílé surfovacím prkně.
Cyklisté se účastní nějakého závodu v parku s několika vysokými budovami v pozadí.
Několik běžců na raftech plnou pasažéry je na řece v řece.
Čtyři cyklisté jedou v řadě.
Tři cyklisté jedou po stezce skrz zaplýně, zelený les.
Mladý muž vytváří, zatímco chytá vlnu na surfovacím prkně.
Nadhazovač nahoře se chystá odpálit míček k odpališti.
Pes skáče přes překážku s otevřenou pusou na pouti, zatímco se lidé dívají.
Pohled shora na dívky, které se drží za ruce v kruhu.
Malý chlapec pózuje na schodech do fotoaparátu.
Muž z USA běží parkem a část závodu nebo v maratonu.
Toto je obrázek skupiny lidí na překážkové vystoupení před davem lidí.
Dívka skáče z okraje oceánu.
Jezdec závodící v červené uniformě s mužem v červené uniformě na kolejích, který vede kolo v zatáčce.
Žena v bikinách surfuje za slunečného dne.
Holky soutěží ve venkovní hokejové hokeji.
Fotbalista se snaží udržet míč, zatímco se rozhodčí snaží zabránit pryč.
Zde je surfaček, který se snaží vyfotit, aby se vyhrabili.
Muž se krčí na surfu ve vodě, zatímco jede na vlně.
Muž v zeleném triku drží miminko v oblasti.
Surfař skáče při vlnách.
Fotbalisté hrají ve školní hře se zlatými a modrými dresy, kteří hrají hru proti bílo-černé.
Člověk jedoucí na padáku dolů po zemi.
Filmova je osvětlena podél tmavé cesty.
Černá žena v bílém, která je ošetřován ženami v modrém.
Dva fotbalisté v různobarevných uniformách bojují o kontrolu míče.
Pohled shora na dva muže, kteří závodí na rohu ulice.
Šest mužů je v řadě, zatímco jede na kole.
Dva cyklisté na kolečkových bruslích, jeden v červeném triku a helmě, druhý v zeleném triku a helmě.
Muž řídí zelený závodní auto s číslem 11. 5
Holky hrají volejbal, zatímco fanoušci fandí z nich fandí.
Fotbalista a hráč v červeném se snaží zablokovat míč od hráče v zeleném.
Fotbalista dělá pohybu proti proti soupeři.
Dvě mladé ženy na opačných týmech hrají hokej.
Fotbalista v šedém dělá srazit na fotbalovém zápase v fotbalovém zápase.
Toto je obrázek muže odpalujícího pálkou na baseballu, zatímco se lidé dívají.
Chlapec a japonská dívka jdou v autobuse se svými taškami nataženými taškách.
Krásný stroj uprostřed noci s věcí na konci.
Skupina mužů s kamerami a rukama ve vzduchu.
Mladý muž skáče na rampě s skútrem.
Muž jede na horském kole.
Dívky v černých trikotech tančí na pódiu.
Muž vychází z jesky a na pláži.
Muž běží do vln oceánu s surfem.
Skupina mužů v plavkách se dívá na vodu a kameny.
Pták vylétá z vody s rybou v tlamě.
Oranžovo-bílé moderní dobře s dodávkou plným lidí na silnici.
Muž nadhazuje baseballovou hru před velkým davem.
Černobílý fotografie muže, který jde po pláži se svým míčkem.
Člověk na černožlutém skútru s lodí v pozadí.
Nějaké děti se shromažďují okolo muže, který nandavá nástěnnou malbu na zdi.
Modrozelené vodě s černočervenou lodí v pozadí, v pozadí je loďka a červený balvan.
Tři lidé hrají americký fotbal, dva z nich drží míč a druhý má na sobě fialový míč.
Toto je obrázek dvou pasažérů, jak sedí na vrchu květináče.
Velká loď plachtí přes vodu s mraky a stromy v pozadí.
Muž stojí se svými nohou na zábradlí a dívá se na vodu.
Mladý člověk předvádí BMX kousek se svým kolem na BMX kole za slunečného dne.
Velký černý kůň stojí před dvěma kbelíky.
Pes běží po pláži.
Hráč amerického fotbalu v červeném hází míč a jiný hráč v bílém běží k němu.
Žena oblečená v pyžamu sedí u stolu s knihou v místnosti se žlutou stěnou.
Skupina lidí pronásleduje krásný západ slunce.
Muž v ochranném oblečení stojí nad psem.
Silueta černobílé dovednosti muže, který jede na kole za ní, vypadá jako osobu, že jede na kole.
Loď na vodě s městem v pozadí.
Mladý chlapec v modrém triku vykukuje z otevřeného okna modrobílého autobusu.
Muž v džínách a černém kovbojském klobouku cáká směrem k budově.
Toto je obrázek muže, který sedí na koni, drží hoří a skáče.
Dva hráči ve žlutých uniformách si hrají s dvěma hráči v bílém dresu.
Toto je obrázek černobílé, bílé obrázky, zatímco člověk na kole jede po silnici.
Horolezec na horské cestě bez kůže.
Místnost mužů v závodě s různými barevnými barvy.
Pár žen hraje na pláži volejbal.
Chlapec s ochranným vybavením předvádí skok na prašné dráze.
Orientální žena drží chrániči a dívá se do dálky.
Mladý muž surfuje s velkým množstvím vody za ním
V dáli vedle pláže s malým městem v dáli.
Servírníci si užívají představení, zatímco plotem v pozadí prochází ohňostroj.
Cyklista jede po travnaté cestě.
Surfař jede na vlnách podél mola.
Skupina dívek si hraje proti sobě na volejbal.
Shromáždění muže tlačí kočárek a žena drží tašku na zdi.
Na louce je rozmačkaná a kolem krmí staršího vozíku s mladým chlapcem, který má na sobě modré tričko, drží vysokou košili a modré tričko, že je velmi mladého chlapce, že je naplněný oblínačené modrou košili a modré tričko, že je napsané modré tričko, že starší chlapec v tmavé triko, které je naplněný oblíženokává stavačokou košili, které je nejenanou košili na poli s nápisem, drží v modré tričko, které je velmi mladou košili s nápisem, žeou košili s nápisem, které je naplněným nápisem,
Muž se chystá uklidit velkou vlnu, zatímco surfuje velmi velké vlny.
Cyklisté jsou společně zatímco soutěží před davem.
Dav se dívá na cyklistický závod a velký dovednost pasažérské vlajky.
Tři závodníci na závodě, jedna z nich je červené a dvě černé a dvě černé.
Roh ulice a auta je vidět auta v temné uličce.
Horský jezero v spadlém dni.
Muž v černém triku leze na velkou skálu, zatímco muž v zeleném triku ho námořnuje.
Červený chrt drží ruční větev.
Zelená dveře je na kamenném schodišti.
Dvě ženy oslavují volejbalový zápas.
Bílo-černý pes skáče skrz jengu.
Muž a dívka sedí u stolu a pracují na počítači.
Řada kozačků ležící na schodech před obchodem, ležící na schodech a jde.
Dva cyklisté a auto vychází z prudké zatáčky obklopené automobily.
Nadhazovačka amerického fotbalu se chystá udeřit míč.
Pohled shora na velkou elektrickou věcí proti oblačnému zamračení.
Obrázek listů hliněné cesty, na levce a pole se stromy.
Zatímco třetí se koupou ve staré misce.
Vojenská kapela a jejich roztleskávaček předvádějí své spoluhráče.
Jezdec, který je zvláštně na nové dřevěné stavbě. 2
Žena s červenou taškou sedí přes jiné ženy s květinovým pytlíkem.
Třída třída se zelenými námořnicky okolo nich.
Černobílý záběr na lidi venku u kulatých stolů.
Divní zvířátka je ve sněhu.
Tři muži jedou na kolech.
Dva fotbalové týmy na hřišti s rouškou ve fialových uniformách a limonádách.
Roztomilý pták na větvi stromu.
Zakusová zvířátka vykukuje z pozadí větší části stromu.
Žena se dívá na něco, zatímco sedí u stolu s kufříkem jídla.
Potápěč přeskakuje malou řeku poblíž.
Plavec jí třetího, zatímco létající z květináče ve vzduchu.
Žena a pes běží přes překážkovou dráhu.
Zákazníci řežou řeku po hoře pokrytém borovicemi.
Krásná fotografie ovládá vodu ve sněhu obklopené sněhem.
Několik stanů na poli v Londýně.
Člověk nesoucí kbelík jde vodou.
Mladá žena v bundě na ruce a jde po chodníku.
Pes se dívá do kamery na chodníku s mužem, který píše na tabuli před obchodem.
Cyklisté jedou dolů z kopce s mraky nad sebou.
Otec se synem se válí na ulici s horou.
Lidé jedou na kolech po silnici blízko sněhem pokrytých zem.
Krásná žena sleduje břehu pláže.
Barman s velkou horou v pozadí.
Černý pes s klackem v kulečníku.
Kolemjdoucí stojí v zasněženém poli poblíž malého terénního vozu.
Dlouhý most přechází řeku pod stromy.
Pták se usiluje na větvích a jí jablko.
Muž na sněhu v dáli se světelným nebem plným mrakodobem a malou oblohou v pozadí.
Černo-bílý obrázek chatky v lese.
Lékař před domem, který visí nad ním.
Dvojice jednotlivců se dívá na zasněženou cestu, dívající se na zasněženou krajinu s krásnými stromy.
Stavební dělníci se snaží vystřelit na neonovou ceduli.
Tři lidé sedí v baru a dívají se nebo pirátským nebem.
Tři lidé visí na pneumatikách vysoko na obloze.
Pohled na horské krajině s sněhem a velkým domem s modrou střechou.
Muž sedí sám u stolu a dívá se na svou dovednost.
Hubený klenutý klenutý s cestou a lesem na druhé straně.
Obrázek bílého řeky, dni v pozadí přecházejí most, za ním je vlak.
Baseballový nadhazovač v zelenobílém dresu hází baseballový míček.
Muž jede na koni a vede řada osly skrz kamenité oblast.
Zlatý listí padá z stromu na chodník.
Muž hraje na piano, zatímco kolem něj prochází lidé.
Malý strom vytváří z řidičky do kamene.
Vozidlo je v červeném triku s mužem v červeném tričku, který se dívá skrz tyč.
Toto je scéna lidí u stolu s velkou vlajkou v pozadí.
Muž s chlupatými vlasy oslavuje s ním.
Velký zápasník se chystá udeřit se svým protivníkem.
Dva muži v boxerském ringu se účastní bojového umění.
Roztomilý chlapec s čepicí se dívá z okna.
Pohled z potoka se dvěma lodičkami, někteří jsou v dálce a stromy.
Černý pes sedí na straně auta a dívá se z okna auta.
Několik lidí leze na zasněženou cestu v horách.
Fotografie nádherného oblačného západu slunce obklopen domy.
Záběr na silnici uprostřed poušti.
Fotka zblízka nahoře nahoře ze strany jeho hlavy.
Slunce zapadá, zatímco lidé plují na obloze.
Lyžař leze na zasněžený kopec.
Lékař je v noci uprostřed malé místo v noci.
Člověk lyžuje dolů po strmém kopci obklopeném vysokými stromy.
Dvě bílé lodi sedí v zalesněné oblasti.
Jeden muž, který vypadá, že griluje na grilu, za nimi je napsáno "iPod a má na konferenční batohů a boty."
Pes vychází na zasněženou uličku plnou rozhodčí.
Lyžař v jasně oranžové bundě jde po strmém svahu.
Dívky basketbalového týmu se snaží chytit míč z jejich soutěže.
Surfař stříká vodu, zatímco chytá vlny a to to toho je ve vzduchu.
Muž nese krabici, zatímco chlapec zametá ulici.
Člověk v oranžové bundě leze na horu.
Pohled na červenou střechu domu.
Francouzový lyžař jde hlubokým kopce.
Žena v černém obleku lyžuje po hoře.
Černý pes a dva bílí psi na pláži koupou vedle dívky a otáčí svého otce.
Letadlo skrz dlouhý listy pod otočeným modrým nebem v modré obloze.
Černý pes stojí na jeho hubě s před prapory, kterými drží osobu.
Toto je skupina mnoha cyklistů, kteří jedou v parku.
Hnědý pes nese v tlamě fotbalový míč.
Muž v kovbojském klobouku stojí před nápisem.
Dva zápasníci uprostřed zápasu v modrobílém aréně.
Muž rybaří na řece obklopené spoustou zelených trámů.
Skupina kovbojů pochodují skrz ulici.
Člověk sedí na kameni vedle velkého množství vody.
Lidé běží ve sněhu, zatímco sněží zaseknutý muž s kamerou.
Dav lidí ve sněhu, muž v zelené bundě hází sněžnou kouli.
Žena předvádí přístroj, jak používat stěnu, zatímco ho dva publikum a dospívající sledují.
Krásná fotografka, kde získává lavičku a hory v pozadí.
Fotka žokejů závodí na venkovním koni.
Lidé jdou po pláži zatímco Slunce zapadá přes vodu.
Pohled z několika budovami s okny.
Dáma v černých plavkách na pláži se dvěma psy.
Několik lidí běží ven z studeného vody.
Žena jde po chodníku ve městě s telefonem v ruce.
Muž se dívá na svůj mobil na schodech metra.
Koně a žokejové závodí na dráze.
Závodník projíždí krajinou s trávou a stromy v horkém dni.
Dva psi, hnědo-černý pes sedí a hrají si s hnědým psem.
Žena stojí na jedné noze s mužem, který stojí před ní na pláži.
Muž na skateboardu ve městě sjíždí zábradlí po schodech.
Brankář skáče na nedokončené kachny, zatímco dva hráči se perou vedle něj.
Skupina cyklistů jede po silnici obklopené sněhem a horami.
Starší žena a pes jdou po pláži.
Scéna zalidněné ulice se pohybují v centru města.
Dva velká vozidla na silnici, aby se dostali do svých směrů.
Venku obklopený zelenými stromy obklopující dřevěným plotem, který je označený bílým nebem.
Osamělý skalnatý chrt sedí na kamenitém břehu.
Malý černobílý pes si hraje ve sněhu.
Člověk jede na surfovacím prkně s plamenem, který je přivázán.
Žena a dívka sedí na dvou židlích, jedna zeleno-jedna z nich je červený.
Krásný lyžař si protahuje cestu skrz stromy.
Malý pes si hraje na trávníku s prázdnou plastovou lahví.
Žena se snaží hodit basketbalový míč, zatímco tým stojí a dívá se.
Fotograf s kamennou cestou podél břehu s stromy a horami za ním.
Černo-bílý obrázek lidí s deštníky, kteří jdou po dlážděném prostranství s deštníky.
Mladý muž se zastavil, aby dokončil svůj mobil, zatímco žena v pozadí dělá mobil.
Žena sedí na bílé lavičce zatímco někdo na kole jede kolem.
Muž ve výskoku nad modrým páskem na trávě.
Člověk se dívá, tři obrázky, jeden z nich drží kytici a dva další dovednosti.
Grafová obrázek malé dívky, která běží po plotu směrem k skupině lidí v dáli.
Osamělý horolezec dělá trik mezi dvěma horami.
Světle hnědý pes běží skrz velkou červenou trubku.
Muži v modrobílých uniformách hrají basketbal.
Malá dívka v růžové sukni je na štěrkovém povrchu s vodou v zemi.
Někdo letí vzduchem a má na sobě sluneční brýle.
Muž v oranžové čepici a muž v zeleném kabátě se sněžným kopcem dolů po zasněžené hoře.
Dítě s lopatou na střeše je v lese.
Dvě ženy spolu zápasí na matraci.
Žena se valí bowlingovou kouli po bowlingové dráze.
Starý hrad s vysokými stěnami a mostem uprostřed věcí.
Fotka stromu vedle jezera při západu slunce.
Tři fotografové fotografují, jak je vidět jiným fotografovi.
Muž na motorce, který se dívá, zatímco auto padá do vody.
Servírka stojí v popředí zamračeného krajiny a horami v oblačném dni.
Dvě ženy se drží za ruce a jdou ve vodě.
Skupina domů je seřazena podél kraje vody.
Usmívající se žena s ochrannou helmou, v ochranných kalhotách a nepřitelných kalhotách, jede na štěrkové cestě s velkými stromy, která vede kolem a venčí bílého psa, vede bílého psa.
Mladý basebalový hráč odpaluje na nadhazovač.
Osamocený lyžař jde po zasněženém horském svahu.
Malé stůl a 6 pěkných modrých židlí jsou na fotku.
Malé děti s klaunovými makeupy a červenými nosy.
Cyklisté jsou zaparkované na chodníku, zatímco další vozidla zaparkovaná na ulici.
Černobílý obrázek lidí v nějaké vodní hladině a vodopádu za nimi.
Teenageři hrají rugby na zemi.
Nevěsta hází kytici ke skupině ženech za ní.
Cyklista vyhazuje z balík na dlouhé straně cesty.
Několik lidí se kouká na portréty v umělecké galerii.
Běloch plave ve velkém jezeře.
Hráč baseballu přistává na metě, zatímco jiný hráč ho brání.
Je tam velice velké hory na kraji zalesněné cesty.
Několik rybařů se řadí nebo na přechodu, aby přešel přes řeku s velkými kameny, aby přešel přes vodu.
Malý potok uprostřed dvou velkých kamenů ve sněhu.
Žena čekající k hodu koulí v baseballovém míči.
Horolezec vytírá přes vodu pod sebou.
Ulice plná lidí a aut.
Červeno-modré čtyřkolky před roztaženým ručníkem.
Silueta, jak se učí být tým v červených tribunách a dva muži, kteří mají na sobě zeleno-bílé triko.
Chlapec skateboarduje na betonu ve městě s sedadlem v pozadí.
Tři kachny plavou ve vodě.
Krásný les obklopený stromy a spoustou stromů.
Žena s tetováním na jejím pásku ukazuje svým páskem.
Pár ležící pod malým stromem zatímco ostatní sedí a procházejí okolo.
Dva hráči lakrosu hrají zápas.
Tři muži v sportovních uniformách běží v překážkové závodě.
Roztleskávač ve vzduchu předvádí trik na basketbalovém hřišti.
Lyžař míjí trojní cestu několik dalších lyžařů na cestě.
Pálkař v mělké vodě se spoustou stromů a horami v dálce.
Nadhazovačů, žena v červeném triku nadhazovače a další žena v modrém tričku, se dívá dolů.
Žena dělá skok se svými nohami.
Spousta aut zaparkovaných po větrné silnici.
Dvojice plyšových zvířátků, plyšová zvířátka a regály jsou na větvícené větvi.
Dva muži běží po trávě a honí fotbalový míč.
Baseballový tým si procvičuje, zatímco hráč se přibližuje.
Muž sedí na kbelíku před dodávkou.
Malý vodní vodní ploše je obklopena melouny s obrovskými lyžovatkami v pozadí.
Je tam mnoho zelených stromů a velkých stromů.
Žena v černém kabátě odchází od davu před vlakem.
Silueta západu slunce s lodí a světlem v pozadí.
Kovboj padá z skákacího koně, zatímco se lidé dívají v pozadí.
Fotografie betonu s květinami, který se vznáší.
Dva chlapci hrají fotbal, jeden je v červeném právě kopou.
Muž na motorce uprostřed saltou.
Velké množství písku probíhá po dlouhé písčité duně před temného pole v zemi.
Žena v oranžovém triku a černých šortkách jde po štěrkové cestě v lese.
Baseballový hráč v červenobílém dresu letí a hází míček.
Rodiče obdivují několik dětí, které si hraje na jasném úboru.
Servírka na pláži u jezera s vyplazeným člunem.
Obchodník plave ve vodě.
Toto je obrázek melounů v lese, zatímco zírá a zaujšímu.
Velká skupina všichni v černých trikách hrají na bubny.
Zvláštní modré dveře je vchody do bílé budovy.
Dva hokeje vedle sochy, zatímco se na ně dívá pes.
Fotografie nádherné labutě uprostřed lesa.
Žena tančí v barevných sukních a šatech.
Dvě fotbalistky se snaží kopnout míč.
Velký pes jde po dřevěné kládě s vlnami ve vlnách.
Přibližující řeč s modrou vodou.
Hráč kope do míče přihlížejí.
Toto je po cestě k mostu v lese.
Hokejista v modro-zlatých uniformách trefuje puk, zatímco se zeleno-bílé uniformě následuje puk.
Skupina žen v černém a červených trikách vystupují na pódiu.
Dva hokejové týmy na ledě hrají hokej.
Malý pták sedí na větvi vedle rybníka.
Mladá dívka v bílém triku jde po štěrkové cestě.
Muž jede na kole po silnici.
Dítě v pyžamu si hraje v písku s jeho matkou.
Béžový most spadlý větrný most s velkou v popředí.
Fotografie podzimního automatu s modrými mraky v pozadí.
Toto je obrázek bazénu s horami a mraky v pozadí.
Býk prolétá s nějakými domy na konci.
Červené sportovní auto s číslem 13 jede po silnici. 8
Pes uprostřed pole si hraje s míčem.
Surfař surfující na pláži.
Bílý pes s černými skvrnami běží po malém kopci.
Tři ženy a jeden muž závodí na červené trati.
Chlapec v šortkách a klobouku skateboarduje.
Muž v bílém triku závodí na dráze v hlíně.
Skupina lidí jde metrem.
Černý pes na vodítku v hlíně.
Muž skáče do vzduchu s nohama, která sedí a zdá se, jako i sedí v pozadí.
Lékař je usazen na květině v zelené trávě.
Pták koupající se ve vodě a zrovna přistává.
Přiblížený člověk sedí na pryčném zeleném listáku.
Tři fotbalisté uprostřed hry.
Krásná krajina s velkým lesem.
Prodavačka je viděn na stezce mezi stromy.
Lidé jedou po ulici na velmi vysokých kolech.
Rodiče a tři malé děti na chodníku ve velkém městě.
Malý hospoda staví konstrukci na skalní římse s výhledem na hladinu vody.
Dva cyklisté jedou dolů po dlouhých schodech.
Několik lidí sedí ve veřejném parku na trávě.
Dva vědeři uprostřed vody se objímají.
Žena v barevném oblečení tančí s dvěma kruhy kolem ní.
Muž drží meči a cáká ovoce na stole.
Krásná fotografie vesluje uprostřed lesa.
Silueta dvou mužů a tři ženy před jezerem s městem v pozadí.
Děti stojí v ulicích v tmavých barvách.
Člověk řeže řeku na klidné vodě.
Tanečnice v khaki kalhotách, vestách a sestavuje tanec.
Býk a malý pes se na sebe dívají přes plot mezi plotem.
Čtyři tanečnice na pódiu vystupují v bílých sukních.
Několik cyklistů přechází řeku na kole po mostě.
Modrá zelený jezero v horách.
Muž v červeném tričku a černých šortkách s černými legínami skáče do vzduchu po malém míčku.
Muž v kachnech, džínách a teplákové bundě spí v metru.
Potápěč hází své klobouky uprostřed zeleného pole.
Horský stánek je pokrytý sněhem se zelenými borovicemi.
Čtyři ženy v černých trikotech tancují v kruhu.
Pes skáče do vody v průchodu.
Hromada dokončků stojí uprostřed zeleného pole s mraky v dálce se zelenými stromy v dálce.
Cestující jdou po nástupišti po stanici metra.
Žena sedí u stolu a mračí se na muže.
Hluboce na zeleném vršku obklopený stromy.
Lidé ve žlutém raftu pluje po strmém řece s mraky pokrytými stromy a stromy v dálce.
Pták sedí na stromě s jasně žlutým chlupkem.
Muž hraje fotbal v červeném objíždějícího muže v bílém se ho snaží zastavit.
Fotka malého mostu nad mělkou denní denní den.
Je tam dívka s košíkem a růžovými botami, kteří jdou lesem.
Zraněný v dáli města.
Muž čte knihu vedle ní.
Desítky cyklistů závodí na okraji jezera.
Servírka stojí na poli se sluncem v dáli.
Dva týmy veslaři soutěží ve člunu se zlomenou sochou.
Dva mladí chlapci bez trika si hrají v rozstřikovači na travnatém poli.
Unaveně s dvěma ženami, z nichž jedna z nich má její černý obličej.
Bílý pták letí blízko stromů.
Černoch leží na zdi na chodníku.
Pes s peněženou na hlavě skáče pro míč.
Toto je obrázek dřevěné lavici v lese.
Toto je scéna sedí na stromě a škrábe se na něčích.
Člověk se opaluje na velké betonové desce poblíž modré plochy.
Černobílý fotografie ženy sedí na stoličce a opírá se o budovu.
strom se zelenými listy a jiným červeným listem s modrým nebem v pozadí.
Muž sedí na koni, která jí povzbuzuje.
Dva muži sedí na lavičce a čtou si.
Je tam chodník vedle potoka v lese.
Mladý muž bez trika stojí na chodníku a kouří cigaretu.
Muž oblečený ve sportovním oblečení trénuje svého psa ve venkovním parku.
V noci je osvětleno městskými horami v noci.
Zpěvák na koncertě s davem, který se ho přibližuje.
Auta projíždí lesnatou cestou se zeleným stromem v dáli.
Hudba je v pozadí s stromy a trávou.
Zaměstnanci řeky a kamene během dne.
Požárně lidí v kánoji na řece s horami v pozadí. 2
Hnědo-bílý pes plave ve vodě s dlouhým klackem v tlamě.
Stará budova je na kopci vedle oceánu a padá.
Malá dívka mazlí rybu v růžovomodré a puntíkované čepici s kozačkami.
Krásná krajina s velkými stromy v dáli a velkou řeku.
Mladá dívka s košíkem stojí vedle rozloženého stromu v lese.
Spousta bílých plavců plave v prostranství.
Muž s brýlemi a batohem na vlakovém nádraží.
Je slunečný den vedle za slunečného dne.
Dívka, která hraje softbal, klouže k metě, zatímco je další hráčka.
Fotbalista se snaží kopnout do míče, zatímco hráč v bílých blokovat.
V zahradě sedí na zahradě se světle růžovými kytkami, který zírá do dálky.
Plavčík běží na zahradě s modro oranžovým hračkou v hubě.
Batole ve vlhké čepici drží kovové zábradlí na útesu s výhledem na oceán.
Zaměstnanec na vršku kopec a stromy pod zamračenou oblohou.
táboří oheň s ohněm a jezerem zalesněné stromy.
Kapela muzikantů hraje venku, zatímco je publikum sleduje.
Chlapec žongluje venku s fotbalovým míčem.
Hasič je zaparkovaný na ulici.
Černé závodní auto s číslem 13 na trati. 28
Sluneční svit skrz les a moře s malým jezerem v pozadí s malým jezerem a stůl v pozadí.
Muž fotí ženu, která pózuje před vodou.
Obrázek piknikové scény, na kterém jsou skládací židle pokryté červené látky.
Muž drží frisbee a bílý pes skáče přes něj.
Děti stojí s bílou čelenkou s barevnými náhrdelníky.
Čtyři fotbalisté se navzájem na fotbalovém hřišti, jeden padá dozadu a druhý padá.
Černo-bílý pes s létajícím talířem v tlamě přes muže.
Žena se dvěma malými psy, jedno z nich sedí v červeném kajaku.
Dva velcí černí psi běží přes travnaté pole.
Auto staré červené závodní auto se soustředí v pozadí. 3
Tři lidé stojí na okraji útesu a dívají se dolů.
Vlázník na trati s otevřenou zadní částí zalesněné oblasti.
Krásný konstrukc se dvěma barevnými kusy kamene, bílé a červené pláštěnce na pravé straně.
Závodní auto kouří a čelenkou se zastavilo ke kameře.
Toto je obrázek velkého psa, který stojí na vrcholu dřevěných schodech.
Muž, který obsluhuje plachetnici na chodníku, aby si prohlézačky.
Velký bílý betonový schodů s chodidlem a mužem v rukou sedí s hlavou.
Řada kamenitých konstrukce a pískem v písku.
Žena je na břehu vody a drží červený ručníkem.
Dva lidé bojují v bahně, několik lidí v pozadí.
Nějací muži hrají frisbee, jeden z nich skáče do vzduchu.
Chlapec jde po straně cesty, zatímco jiní chodci procházejí.
Chlápek s několika stromy na spodním konci.
Barevné plavky se vznáší na kamenité pláži.
Velká pohyba odpočívá na kleci plné melounů.
Bruslařka ve fialové předvádí trik blízko ledu.
Otec stojí na trávě u pařezu.
Shromáždění velblouda na kamenné zemi.
Bosá žena jde po písčité písčité ploše.
Přiblížená fotka velkých důstojníků na zeleném list papíru.
Žena odpočívá ve sněhu zabalené v kožichu.
Dva mladí muži v barevných plavkách drží sušenku na ručném raftu, zatímco jsou roztaženi lodě.
Zaměstnanec letí nad vodní plochou s molem v pozadí.
Skupina cyklistů jede na horské cestě.
Mladá dívka oblečená v růžovém nedodělně sedí na soše v parku za mrakého dne.
Fotografie nádherného západu slunce.
Detailní záběr na zeleném trikotu.
Fotograf se připravuje na výstavu s batohem na zádech.
Požárníci nakládají své peníze na holé krajině.
Mladý muž dělá skok s skateboardem na městské ulici.
Žena se nechává hodit míč na jinou ženu.
Toto je obrázek hluboko v poli dívající se na někoho.
Plavec nese květinu uprostřed lesa.
Německý ovčák se prochází v přírodním poli.
Toto je obrázek dívky, která jede na vrchu koně před davem lidí.
Muž s knírem sedí před betonovou zdí.
Žena a její děti stojí na chodníku a fotí.
Atletka skáče do vzduchu na hřišti.
Středně-bílý kůň stojí na kamenné římse a vyhlíží se na pole nebo sestavu.
Toto je obrázek skupiny tanečníků na pódiu.
Na okraji vody je mnoho kajaků s mnoha kajaky.
Auto je ve vzduchu, když řídí špinavou cestu.
Skupina dívek tleská a tančí, zatímco lidé sedí na kolenech za ním.
Socha muže na koni v chůdách.
Dítě sedí v restauraci u stolu a jí z talíře.
Fotografie muže se svým vozíkem a v pozadí rozkrokaným skříňem.
Člověk v šedých šortkách se valí v bahně.
Několik lidí a hnědý pes si užívají vodu a písečné pláži.
Různí pózující na hlubokém větru s modrými křídami v pozadí.
Dva lidé jdou po stezce po prudkém kopci.
Kajakář závodí po řece okolo oranžových míčů.
Chlapec v kajaku pádluje ve vodě s velkou oranžovým míčem poblíž.
Hudebník stojí venku na travnatém prostranství.
Žena a její tři děti jdou přes cihlovou cestu před budovou.
Muž s vousy sedí na schodu před budovou.
Muž a žena si užívají v kavárně.
Dva lyžaři pouští draky plavou ve vodě.
Čtyři cyklisté přechází železniční trati během závodu.
Místo stojí v trávě vedle hydrantu.
Několik lidí v kajaku je vidět do běžecké bílé, jak přejít přes přípravu.
Mokrý žena v mokrém vybavení v řece.
Černobílý fotografie jde lesem.
Venkovní záběr s kameny v popředí.
Žena sedí u zdi s kelímkem mezi nohama.
Detailní skupiny vysokých stromů proti modrému nebi a mraky.
Několik dětí předvádí taneční aktivity během třídy.
Plavec s velkými kameny vedle něj.
Kůň skáče přes zábradlí na soutěži.
Dva muži běží po fotbalovém hřišti.
Zpěvačka, která si hraje s vlasy, zatímco kytarista vedle ní hraje na pódiu.
Je tam šipka přes zelenou duhu.
Jezdec na koni skáče přes překážku na dráze.
Vodní květináči vytváří poblíž jezera s horou v dálce.
Blonďatý pes a blonďatá žena si hrají v bazénu.
Silueta zaměstnanec s dvěma lidmi, kteří jdou pohoře se dvěma chodci.
Toto je obrázek venkovní scény, v pozadí jsou stromy a pána v popředí.
Plavec plave kolem větve a zblízka.
Starý modré náklaďák je zaparkované u nějakého náklaďáku.
Modrá obložené, hnědo-hnědo-hnědá oblohy.
Loď uprostřed velkého jezera obklopeným jezerem.
Motokrosový jezdec předvádí kaskadérský kousek, během soumraku.
Skupina mužů hraje baseball před davem.
Skupina dětí a žen stojí s rukama ve vzduchu.
Skupina cyklistů závodí po strmém kopci.
Černobílý fotografie stoupáru kopce.
Muž v pruhované helmě padá z motorky.
Skupina lidí na sportovní události držíní deštníky.
Skupina mužů jde po teplákové cestě lemované stromy.
Vysoký kánoe nebo v pozadí je sníh s několika sněhem, v pozadí je jezero.
Kočka leží na zaprášené silnici na zaprášené cestě.
Černo-bílý fotka rušného venkovního domu s usmívajícími a ženou.
Spousta dřevěných tyčích se zastavilo v umělci.
Malé štěně s dveřmi otevírá na dvorku domu.
Starý dřevěný most s horou za ním pokrytou stromy.
Cestující čeká u dlouhého přístavu s městem v pozadí.
Bílý kůň stojí před červeným sýblem.
Auta a auta uprostřed nedaleko dalšího stojanu.
Toto je obrázek černého kočky, která sedí na vrcholu klády a škrábe na hlavě.
Lezec sedí na zahradě s dětmi a červeným barem v dáli.
Osamělý vozík je zaparkovaný na trávě blízko baru.
Muž v černém oblečení a klobouku předvádí skateboardový trik na betonové zdi.
Člověk stojí na dřevěném mostě přes řeku.
Toto je scéna lesa a jezero v popředí.
Fotografie muže s velkými vousy.
Žena ve skoku uprostřed ulice obklopené budovami.
Mladý chlapec a dívka si venku hrají s provazem mezi nimi.
Dva staří muži se společně smějí, zatímco sedí na schodech.
Muž jede na tažních ramenech uprostřed moře.
Jsou tam muži v metru.
Parašutista vykopává listí z vody ve výtahu.
Starší muž hraje na strunný nástroj a sbízí se v černobílé.
Žlutý pes běží přes míč v trávě.
Servírka se připravuje na letadlo pod růžovým nebem.
Fotka mnoha používatelů, kteří jsou přihlížejí.
Několik lidí v kiltech hraje na dudy na zeleném poli.
Žena, která drží nějaké knihy, stojí před starším zdobenou budovou.
Skupina mužů v kánoi.
Pár nohou nohou s dvěma páry na obou stranách po obou stranách.
12, převážný doprovázený lidé nahoru po dlouhých schodech. 2
Kytarista je vyhlídka se svými provazy.
Člověk v šedém triku jede na surfovacím prkně.
Pes na ulici vedle motorky na ručníku.
Muž v červeném triku jede na skateboardu po zábradlí.
Vodní lyžař sedí na větvi a zírá do dálky.
Žena běží se svým copánky, který nese radostí s radostí, zatímco se lidé dívají.
Stará žena oblečená v kožené bundě a oblečení na nedaleko mladší osobu.
Muž stojí uprostřed kamenné cesty.
Lidé jdou po chodbě poblíž metra.
Žena a černý pes na surfovacím prkně pádlují v bazénu s modrou vodou.
Detailní záběr na růžové květiny.
Zaměstnanec v popředí čte, zatímco ho vysokou oblohu s vysokým nebem v pozadí. 6:51
Hudebnice s kameny, pískem a vlnami.
Obrázek řeky a interaguje čínskou budovu.
Krásný západ slunce s mostem v pozadí.
Jeden muž chytá míč a druhý má na sobě červenou klouže na hřišti.
Muž a žena sedí spolu na zelené lavičce v parku.
Černý pes vychází z bazénu.
Hnědý radostně sedí v místě suchými listy.
Lidé jdou po chodníku vedle pláže.
Muž s černou taškou jde bosá městem.
Velký potok vytírá duhovou duhu s malým dlaždičkem nad nízkou.
Žena v růžové helmě a s batohem jede na kole před městem.
Muži hrají fotbal na nadhazovač.
Cestující buďe na několika čokolech.
Muž si dává nos, zatímco se kouká do výlohy.
Horolezec na poušti za několika zelenými stromy.
Evropský náklaďák s vybavením zaparkovaná před přírodní budovou a vypadá vyhlídky.
Hráč týmu číslo 12 se chystá chytit fotbalový míč, zatímco se dva hráči snaží zablokovat. 8 44
Holka v modrém triku a černých kalhotách sedí na dveřích schodů.
Dva mladí muži jedou po štěrkové cestě lesem.
Černo-bílé fotografie mostu nad řekou s těžkým mlze.
Řada jednotlivých, bílých a červených domů jsou poblíž venkovního prostředí s židlemi a stoly.
Podnikatel jsou v popředí vodní plochy s rozbředlým nebem v pozadí.
Žena s batohem jí koly v restauraci.
Pohled shora na město na mopech na břehu řeky.
Muž v červené bundě na závodní dráze fouká roh.
Žongléři hází rušnou kuželku.
Skupina malých dětí se směje a tancují.
Ruka drží bílý hrnec, které má květinu.
Silueta je v tašku v bílé krabici.
Tři lidé na motorkách jedou skrz bahnitou část dráhu a přemýšlí, aby mohli vyjel do objektivu.
Pohled z před sedadlem auta, kde jede závod na zatáčce po cestě a prošel při západu slunce.
Pilotka stromů uprostřed turisty pokryté vodou.
Tento fotbalista drží nadhazovač ve vzduchu během konci zóně.
Opravář je uprostřed bloku, zatímco střecha v pozadí střílí oheň.
Barevný důstojník umývá nádobí do vody zatímco se lidé dívají.
Pohled shora na jiného náklaďáku nebo mořského vozidla.
Hodní jezero pod modrým nebem s mraky.
Podnikatel vedle ulice a několik malých budov.
Obrázek 14 montérů, z nichž jeden z nich drží kytici v květináči. 3
Žena drží rukavice přes obličej, zatímco stojí na palubě.
Mladá blondýnka v červeném triku stojí v kostele a hledí do kostela s rozloženými rukami naloženými rukami.
Pět a žokejů se účastní závodu.
Pohled na modré oceánu s loděmi, která pluje a zelenými horami podél břehu.
Samotný strom je v řece v popředí s výhledem na hory za oblačného dne.
Plavčí v jezeře obklopený stromy a kopci.
Krásná krajina uprostřed lesa.
Žena ve fialovočerveném stojí pod stromem.
Skupina malých dětí cvičí.
Požárníci a jezero v noci.
Tato fotka je obrázek paní, která leží a natahuje se k fotoaparátu.
Toto je obrázek nádobí sedí na vršek člověka.
Kuchavač jí něco stojící na dřevěném povrchu.
Horolezec vylézá z vodnatého hasičského vozu, který vychází z vody s růžovými průchody na levé straně.
Černo-bílý pes běží s vodou a padá z červeného šátku.
Muž v červené čepici sedí vedle ženy v červených šatech.
Dvě děti jedou na svých kolech po oplocené cestě.
Kněz při západu slunce při západu slunce při západu slunce.
Černá velblouda ohečeného oblouku a malou kašnou vody.
Černo-bílá fotografie zamyšleného dne se stromy v poli.
Hodně kamenů poblíž řeky s horami a stromy za ním.
Dva lidé jdou polem se stromy a žlutými listy na zemi.
P jezero obklopený sněžnými horami pod zamračeným nebem.
Žena v bílém se dívá skrz okno obchodu.
Dvě ženy sedí před zrcadlem.
Modrý moc na pláži při západu slunce.
Žena s vlasy na obličeji se zeleným nápisem v pozadí.
Muž v ochranné přilbě stojí u budovy.
Žena je oblečená ve žluté párce vedle nízké trubky.
Fotka velkého oblouku s krásným obloukem s krásným obloukem.
Spousta lidí jde blízko staré budovy s oblouky.
Toto je scéna mezi dřevěnými budovami s člověkem v pozadí.
Městská město v noci vedle řeky.
Tato fotka je vidět muže, co je z bazénu s vodními domy a lidmi.
Černošský korun se zdá být jako listy na spadlých barvách.
Černo-bílý obrázek dvou žen stojící venku na spodním schodišti venku.
Velký pláž s deštníky pod deštníky v pozadí a osoba používají představení.
Zelený pouliční baseballu na jednokolce. 2
Barevný důstojník s jedním oknem a obrázky na dvorku.
Toto je obrázek žlutočerveného letadla, který je zaparkovaného na pláži.
Lidé jdou po prašné cestě kolem stromu.
Muž v masce a duhové paruce stojí na rušné silnici.
Černo-bílé fotografie ženy závodí na koni.
Lékař na konstrukci oranžového pádlajícího muže na písečné pláži.
Lidé na ulici v modrém svetru nesou tašku.
Toto je obrázek zdi, na kterém je růžové a modrý obrázek.
Toto je obrázek maluje na zdi malby piva.
Detail věší ručně na cihlové budově a odrazené ve výloze.
Muž na jezeře se stromy podél jezera.
Skupina stromů se zlatými listy sedí v jezeře.
Mnoho okenů s mnoha barevnými svíčkami se svíčkami poblíž nich.
Muž sedí na židli a maluje ceduli na garáži.
Toto je blízko pohledu v pravé ruce.
Fotografie nádherného mostu s pěkným mostem uprostřed.
Tři lidé jdou po nádvoří města.
Hlavní záběr psa v popředí a tři černoši v oranžových kloboucích.
Žena v modrém klobouku se krmí panenkou, zatímco žena v modrém se na něj dívá.
Žena je tvář jako klaun má na sobě barevné oblečení a má na sobě barevné oblečení.
Osamocený stroj pracuje na poli.
Slunce za molem na pláži.
Příslušník, co vypadá jako vlak, že vypadá jako vlak z velkých oken.
Černo-bílý obrázek tří lidí, kteří vypadají, že jsou zvláštní školy, stojí a dívají se skrz knihy.
Skupina lidí před historickou budovou s fontánou.
Žena s červenou kabelkou fotí ženu v bílých šatech s hnědou kabelkou.
Muž a žena pózují na eskalátorech.
Mladý chlapec kope ze svého koloběžky.
Zpěvák leze na větev ve vodě.
Pohled na cestu skrz les u útesu.
Žena s krátkými černými vlasy, v brýlích a zeleném svetru, se dívá na nějaký plakát v venkovním obchodě.
Dva muži sedí a dívají se do notebooku.
Dvě mladé ženy, jedna s velkým batohem, se dívá na řeku přes řeku.
Blonďatá žena s čepicí dozadu na lenoší a vyplazuje gesto vítězství.
Černo-bílé fotografie staršího asijského muže v davu.
Žena se opírá o ruku na tvář, zatímco se dívá z okna z ozdobenou vlajkou.
Pokrývač je pokrytá velkou modrou pokrývkou vedle několika kamennou budovou.
Barevné fialové graffiti s uměleckými potřebami pokládá zeď podél přívěsné silnice.
Dvě dámy jdou po chodníku a jedna z nich se dívá do fotoaparátu.
Dívka v modrých plavkách a modrých ponožkách se opaluje.
Obrázek starých domů různých barevných domů a lidé před nimi.
Toto je obrázek člověka ve stanu, který táboří v travnatém areálu.
Městská panáka na zadních kovových podobných lodích.
Žlutočervený ohel letícím letadlem.
Pohled z starého muže, který jde po chodníku.
Tři moderníci se perou a dělají formaci do vzduchu.
Muž stojí sám v černobílé chodbě.
Muž v červeném triku a červené čepici hází baseballový míč.
Člověk odhrabává lahev z lahve s nádobí.
Muž jde kolem zdi, na které je graffiti.
Skupina pěti tanečníků v černých kloboucích jsou uprostřed pódia.
Zelený náhrdelník jde po stromě obklopené stromy.
Žena v červeném drží americkou vlajku a dva akordeony.
Krásná krajina z farmě a jeho setkání.
Člověk na prkně letící s letadlem.
Mladá dívka se protahuje vedle velkého množství vody.
Černobílý obraz z zadní části vyvýšené letadla nad vodou.
Rušná havaj s několika vchody a dveřmi na konci konci konci.
Místní pyramidu před starou sochou.
Obrázek stromu a zamračené oblohou.
Krásná krajina s rozsvíceným řekou a stromy.
Dvě červené fanoušky jsou zaparkované na trávníku.
Žena baseballu se pohybuje pálkou.
Obchod na pláži lemovaný palmami a vlajkami.
Městnanci jsou naplněn velkými budovami a několik lidí chodí po ulici.
Ulice ve městě s několika lidmi chodícími na kolech.
Místní lucera se připravuje na srazit na hřiště, zatímco se jeho nadhazovazuje balon.
Dívka drží sluneční tyče.
Silueta slunečníků a trávou s hořící se stromy poblíž.
Černo bílý obrázek muže a ženy se smějí s tvrdým obličejem, který zakrývá obličej.
Bezdomovec se světly na reklamním trhu, který je napsáno "Squette Bar, Square a vzadu."
Velký počet stojí uprostřed pole.
Černobílý fotografie psa na kládě uprostřed lesa.
Žlutá a zpěvačka sedí na větvích s jeho průhledně nadšenými nadšenými nadšinou.
Muž v červené šále jede na motorce.
Červené květiny sedí na skleněném stolku.
Krásná moderní auto je zaparkovaná.
Hromada vody je v popředí při soumraku se světlou cestou v dálce.
Červený pták na větvi stromu.
Muž a žena používají své telefony v rohu obchodu.
Horský horolezec sedí na kamenech s červenými listy nad kameny a krajinou.
Pohled shora na muže a žena, který se prochází venku na zahradu obklopen kostelem.
Množství zelených úborech rozpražených na limonádách.
Auta je zaparkované na travnatém poli poblíž dvoupatrového domu.
Bílá a stříbrná plakát je zaparkovaná pod posprejovanou zdí s dvěma hnědými květinami a drží světle hnědými květinami.
Žena s tmavými vlasy má na sobě kytičkované čepici a kožené bundu.
Zaměstnanec, falešné budovy s zlatou budovou na slunci.
Kovboj s peníze Texas Texasské vlajky na stromě.
Býk má zelené stromy a špinavé cestu na zemi, zatímco slunce z bok po pravé straně je slunce.
Fotka se stromy a stromy na konci západu slunce.
Rozmanitá krajina a zelená pistoli.
Potápěč cucá v malé zemi vedle silnice.
Skupina bratrů sedí na modrém pozadí.
Dva dřevěných stolů s lahvemi na vrchu tyče.
Různí světelní světla je nad hudebním koncertě, vystaveným z označeným z označeným, z označeným z očeným strojem.
Velký plachetnice ve vzduchu se přistálí ve vzduchu.
Muž ve žluté vestě tlačí vozík vedle vlaku.
Muž stojí u moře a fotí západ slunce.
Pár stojí pohromadě u stolu.
Žena stojí před práci v muzeu umění a fotí.
Lidé se schovávají na pláži ve dne.
Pohled ze sítě do branky fotbalového brankáře je sponzorovaná.
Ročka budovy, kde muž fotí.
Muž sedí a kouří kouř s skleničkou v černobílé a bílé.
Muž na motorce běží po silnici bez domácí.
Malá dívka v růžovém triku něco jí z misky s lžící.
Muž na vodě a nějaké hory v pozadí.
Člověk běží po trávě před budovou a opírá se o budovu.
Městská ulice v noci se řadí po boku.
Mladý chlapec jde po cestě obklopené vodou.
Obrázek západu slunce skrz stromy a mlze.
Starší pár na dřevěném palubě se dívá na horu.
Různí, nakupují lodě na kraji města s lidmi okolo.
Nadšená ulice lemovaná budovami s domy na každé straně.
Osamělý fotbalista s číslem 11 běží po hřišti. 2
Bílý chrt se opírá o modrou oblohu.
Několik interpretů se dívá na budovy v pozadí rušném prostranství, v pozadí jsou mnoho vozidla.
Fotbalista v bílém dresu padá do vzduchu po fotbalovém hráčce v černém dresu, který kope do míče pod ním.
Tři dívky s skleněnými brýlemi sedí venku na římse.
Loď je vidět po velké vodní plošině v potoce nad vodou.
Skupina vysokých budov je shromážděna v černobílém areálu.
Je tam červený vlak na železniční trati.
Toto je strom bez listí v popředí a v pozadí jsou stromy s barevnými listy.
Dva cyklisté jedou v noci po ulici.
Skupina cyklistů čeká v noci na kole.
Toto je obrázek ženy, která nese kolo běžící přes pole.
Člověk v cyklistickém vybavení jde do kopce.
Fotografie velkého nákupního centra města.
Malý hnědý pes, který má na sobě růžový svetr a vyfoukává z obrovské látky.
prázdné autobusové zastávce s hůlkou plným odpadky.
Ulice ve městě, velice oranžový budovou v zatáčce.
Dlaždič v cizí jazyce sedí na židli mezi dalšími věcmi na židli.
Černoch a bílý záběr muže, který nese sušenku.
Muž v kovbojském dresu na bílém koni přeskočí vlajku.
Bílý pes a černý pes si hrají v písku.
Stříbrné auto sedí před jasně růžovým přívěsem.
Zlatě zbarvená třída při soutěži.
Fotografie nádherného oblačného města s velkými mraky.
Žena odpočívá na kabelce s knihou.
Velký blázník na bahnité řece s těžkým strojem z letadla v pozadí.
Bílá socha a šedé sochy u vchodu do budovy.
Servírka s listy za malým nástrojem.
Fotografie nádherného letadla plného sněhu, kolem ní je jezera.
Řada lidí se zdá být na místě ulice.
Pták sedí na starém nápisu.
Je tam stavbu uvnitř malého dřevěného plotu.
Je tam velký útes s zelenými mašlemi na vrchu oceánu.
Letušná modré s mraky přes kolegy a budovami.
Horský jezero pod oblačnou oblohou s budovami v popředí.
Tato fotka muže a žena sedící u stolu, který jí "jí" jí "jí jídlo."
Toto je scéna v moderně, který se dívá s cihlovou cestou a malým stromy.
Pohled shora na ulici, který běží mezi dvěma budovami s auty.
Blonďatá dívka v modrém triku sedí proti stromě.
Chundelatý jezdec jede na starém autě v poušti.
Kuchař se shromažďuje na procházce v trávě.
Muž vaří jídlo ve stánku, zatímco žena v červené bundě stojí u.
Černo-bílý fotografie několika židlí blízko zdi.
Pohled shora na kolo dolů po dlouhé prašné cestě.
Dvě ženy jsou venku na ulici a dívají se na mapu.
Šipka ukazuje na muže, který stojí na pruhované podlaze.
Skupina lidí mluví a připravuje se za jídelními vlajkami.
Velmi krásná žena pózuje do objektivu v lese.
Velký budova sedí pod modrým oblohou s mraky.
Dvě ženy pádlují na kánoi podél vody s městem v pozadí.
Toto je obrázek zdi s pivem namalovanými plechovkami.
Žena zpívá do mikrofonu v opuštěné místnosti.
Muž v závodním závodě s oranžovým trikem a mikinou na hlavě.
Silueta dvou mužů, kteří lezou do venkovního schodiště.
Toto je osoba, která sedí na pódiu s někým v pozadí.
Pohled shora na před několika automobily.
Obrázek vlaku na vlakové trati v černé a bílé.
Skupina lidí drží za ruce a nohama.
Usmívající se mladá žena v modré kšiltovce sedí na kraji silnice.
Slunce se zapaluje nad mlhaným městem.
Motokrosový cestuje lesem s listy.
Spousta lidí zírá v noci vedle stromu a skalní formace v noci.
Lékařů na horské dráze, který jde vedle vysokého útesu a vodopádu.
Leží na svahu v kolečkách, šedých pod ním mají tmavé, šedé plachty.
Sportovní auto s číslem 12 zaparkované venku před kamennou budovou. 20
Dvě dívky se smějí a jdou po ulici před několika obchody.
Fotograf fotí v popředí, který obsahuje mezi horami v pozadí.
Muž a žena se baví, zatímco jdou vedle písečné duny.
Stará žena ve zlaté bundě uprostřed zimy.
Chlapec zírá z okna na přeplněném vlaku.
Žena s cigaretou v puse venku a muž jdou v pozadí.
Muž a žena s hlavami se spolu baví v uličce.
Žena a muž se drží za ruce v noci na pláži naplněné obloze.
